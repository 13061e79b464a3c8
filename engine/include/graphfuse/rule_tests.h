// Rule-file regression tests: "this input, with these rules, becomes exactly this graph".
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace graphfuse {

class Graph;

struct RuleTestOptions {
  std::string filter;   ///< run only cases whose name contains this substring
  bool update = false;  ///< rewrite `expect` of failing cases with the actual graph
  /// Checks numerics for cases with `verify: true`: given the input graph and the
  /// rewritten one, returns "" when they compute the same outputs, else why not. The
  /// engine cannot run graphs (the kernels link the engine, not the other way round), so
  /// `graphfuse test` sets this from the kernels. Empty: such cases are checked for
  /// structure only and counted as `N unverified` in the summary.
  std::function<std::string(const Graph& before, const Graph& after)> verifier = {};
};

struct RuleTestCounts {
  std::size_t passed = 0, failed = 0, skipped = 0;
  std::size_t verified = 0;    ///< passing cases whose numerics were checked too
  std::size_t unverified = 0;  ///< cases asking for `verify: true` run without a verifier
};

/// Runs every test case found in `paths` (rule files with a `tests:` section, test files
/// with `load:` + `tests:`, or folders searched recursively for *.yaml). Prints one line
/// per case (and a diff per failure) to `out`, then `N passed, N failed[, N skipped]`.
/// A file that cannot be read or whose rules do not load fails all its cases.
RuleTestCounts run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& opt,
                              std::ostream& out);

}  // namespace graphfuse
