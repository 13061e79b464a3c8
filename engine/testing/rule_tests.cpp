// The rule-file test runner behind `graphfuse test` and the per-file ctest tests.
#include "graphfuse/rule_tests.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

#include "graphfuse/compare.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "rule_test_file.h"

namespace graphfuse {

namespace fs = std::filesystem;
using testing::RuleTestCase;
using testing::RuleTestFile;

namespace {

std::vector<std::string> expand_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

struct CaseOutcome {
  bool passed = false;
  bool verified = false;               ///< numerics were checked (and agreed)
  std::string message;                 ///< why it failed
  std::optional<std::string> updated;  ///< new expect text, for --update
};

CaseOutcome run_case(const RuleTestFile& file, const RuleSet& rules, const RuleTestCase& tc,
                     const RuleTestOptions& opts) {
  CaseOutcome out;
  if (!tc.malformed.empty()) {
    for (const Error& e : tc.malformed) out.message += "  " + e.pretty() + "\n";
    return out;
  }
  Graph input, actual;
  try {
    input = testing::load_case_graph(file, tc.input);
    actual = input;
    RewriteOptions opt;
    if (tc.max_rounds) opt.max_rounds = *tc.max_rounds;
    if (tc.threads) opt.threads = *tc.threads;
    if (tc.only_rules) {
      for (const std::string& name : *tc.only_rules)
        if (!rules.find(name))
          throw Error(SourceLoc{file.path, tc.line}, "case '" + tc.name + "' names unknown rule '" + name + "'");
      opt.only_rules = *tc.only_rules;
    }
    // `rules: []` runs no rule at all (an empty only_rules would mean every rule).
    if (!tc.only_rules || !tc.only_rules->empty()) rewrite_graph(actual, rules, opt);
  } catch (const Error& e) {
    if (tc.expect_error.present) {
      out.passed = std::string(e.what()).find(tc.expect_error.text) != std::string::npos;
      if (!out.passed)
        out.message = "  expected an error containing \"" + tc.expect_error.text + "\", got:\n  " + e.pretty() + "\n";
      return out;
    }
    out.message = "  " + e.pretty() + "\n";
    return out;
  }
  if (tc.expect_error.present) {
    out.message = "  expected an error containing \"" + tc.expect_error.text + "\", but the run succeeded\n";
    return out;
  }
  bool unchanged = tc.expect.text == "unchanged";
  Graph expected;
  try {
    expected = unchanged ? input : testing::load_case_graph(file, tc.expect);
  } catch (const Error& e) {
    out.message = "  in expect: " + e.pretty() + "\n";
    return out;
  }
  GraphComparison cmp = compare_graphs(expected, actual);
  out.passed = cmp.equal();
  if (!out.passed) {
    out.message = (unchanged ? "  expected the graph unchanged; differences:\n" : "") + cmp.render();
    out.updated = write_graph_text(actual);
  }
  // Numerics after structure: a case whose graph is wrong fails on the diff alone, and
  // its --update must not wait on the kernels.
  if (out.passed && tc.verify && opts.verifier) {
    std::string why = opts.verifier(input, actual);
    out.verified = why.empty();
    if (!why.empty()) {
      out.passed = false;
      out.message = "  " + why + (why.back() == '\n' ? "" : "\n");
    }
  }
  return out;
}

}  // namespace

RuleTestCounts run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& opt,
                              std::ostream& out) {
  RuleTestCounts counts;
  for (const std::string& path : expand_paths(paths)) {
    std::optional<RuleTestFile> file;
    try {
      file = testing::read_rule_test_file(path);
    } catch (const Error& e) {
      out << "FAIL " << path << "\n  " << e.pretty() << "\n";
      ++counts.failed;
      continue;
    }
    if (!file) continue;  // a YAML file without tests
    std::optional<RuleSet> rules;
    std::string load_error;
    try {
      rules = load_rule_files(file->rule_files);
    } catch (const Error& e) {
      load_error = e.pretty();
    }
    std::vector<testing::ExpectUpdate> updates;
    for (const RuleTestCase& tc : file->cases) {
      if (!opt.filter.empty() && tc.name.find(opt.filter) == std::string::npos) {
        ++counts.skipped;
        continue;
      }
      std::string where = path + ":" + std::to_string(tc.line);
      CaseOutcome r;
      if (rules) r = run_case(*file, *rules, tc, opt);
      else r.message = "  rules did not load: " + load_error + "\n";
      out << (r.passed ? "PASS " : "FAIL ") << where << " " << tc.name << (r.verified ? " (verified)" : "") << "\n";
      if (tc.verify && !opt.verifier) ++counts.unverified;
      if (r.passed) {
        ++counts.passed;
        if (r.verified) ++counts.verified;
        continue;
      }
      ++counts.failed;
      out << r.message;
      if (opt.update && r.updated && !tc.expect_error.present) updates.push_back({tc.expect, *r.updated});
    }
    if (!updates.empty()) {
      write_file_atomic(path, testing::apply_expect_updates(*file, updates));
      out << "updated " << updates.size() << " expectation(s) in " << path << "\n";
    }
  }
  out << counts.passed << " passed, " << counts.failed << " failed";
  if (counts.skipped) out << ", " << counts.skipped << " skipped";
  if (counts.verified) out << " (" << counts.verified << " verified numerically)";
  if (counts.unverified) out << ", " << counts.unverified << " not verified numerically";
  out << "\n";
  return counts;
}

}  // namespace graphfuse
