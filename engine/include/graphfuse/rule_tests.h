// Rule-file regression tests: "this input, with these rules, becomes exactly this graph".
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace graphfuse {

struct RuleTestOptions {
  std::string filter;   ///< run only cases whose name contains this substring
  bool update = false;  ///< rewrite `expect` of failing cases with the actual graph
};

struct RuleTestCounts {
  std::size_t passed = 0, failed = 0, skipped = 0;
};

/// Runs every test case found in `paths` (rule files with a `tests:` section, test files
/// with `load:` + `tests:`, or folders searched recursively for *.yaml). Prints one line
/// per case (and a diff per failure) to `out`, then `N passed, N failed[, N skipped]`.
/// A file that cannot be read or whose rules do not load fails all its cases.
RuleTestCounts run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& opt,
                              std::ostream& out);

}  // namespace graphfuse
