// The rule-file test runner behind `graphfuse test` and the per-file ctest tests.
#include "graphfuse/rule_tests.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <ostream>

#include "graphfuse/compare.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "rule_test_file.h"
#include "testing/case_expectations.h"
#include "testing/never_matching.h"

namespace graphfuse {

namespace fs = std::filesystem;
using testing::RuleTestCase;
using testing::RuleTestFile;

namespace {

// A file to test, and whether the user named it (a file found in a folder may hold only
// rules or ops; a named file without a case is a mistake worth saying).
struct TestPath {
  std::string path;
  bool named = false;
};

std::vector<TestPath> expand_paths(const std::vector<std::string>& paths) {
  std::vector<TestPath> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file() && (e.path().extension() == ".yaml" || e.path().extension() == ".yml"))
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      for (std::string& f : found) files.push_back({std::move(f), false});
    } else {
      files.push_back({p, true});
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
  RewriteReport report;
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
    if (!tc.only_rules || !tc.only_rules->empty()) report = rewrite_graph(actual, rules, opt);
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
  out.message = testing::check_expected_counts(tc, input, actual, report);
  if (tc.expect.present) {
    bool unchanged = tc.expect.text == "unchanged";
    Graph expected;
    try {
      expected = unchanged ? input : testing::load_case_graph(file, tc.expect);
    } catch (const Error& e) {
      out.message += "  in expect: " + e.pretty() + "\n";
      return out;
    }
    Graph compared = actual;
    if (!tc.compare_weights) {
      testing::elide_weights(expected);
      testing::elide_weights(compared);
    }
    GraphComparison cmp = compare_graphs(expected, compared);
    if (!cmp.equal()) {
      out.message += (unchanged ? "  expected the graph unchanged; differences:\n" : "") + cmp.render();
      out.updated = write_graph_text(compared);
    }
  }
  out.passed = out.message.empty();
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

// Where --update puts a case's new expectation: back into the file it names, into a new
// file beside the test when it is too long to read inline (a whole model), or inline.
// nullopt when the expectation went to a file the test already names.
constexpr std::size_t kInlineExpectLimit = 4096;

std::optional<testing::ExpectUpdate> place_update(const RuleTestFile& file, const RuleTestCase& tc, std::string text) {
  fs::path dir = fs::path(file.path).parent_path();
  if (testing::names_graph_file(tc.expect.text) && fs::path(tc.expect.text).extension() == ".graph") {
    write_file_atomic((dir / tc.expect.text).string(), text);
    return std::nullopt;
  }
  if (text.size() <= kInlineExpectLimit) return testing::ExpectUpdate{tc.expect, std::move(text), ""};
  std::string slug;
  for (char c : tc.name) {
    bool word = std::isalnum(static_cast<unsigned char>(c));
    if (word) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '_') slug += '_';
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  std::string name = fs::path(file.path).stem().string() + "." + slug + ".expect.graph";
  write_file_atomic((dir / name).string(), text);
  return testing::ExpectUpdate{tc.expect, "", name};
}

}  // namespace

RuleTestCounts run_rule_tests(const std::vector<std::string>& paths, const RuleTestOptions& opt,
                              std::ostream& out) {
  RuleTestCounts counts;
  std::size_t cases_seen = 0;
  std::map<std::string, std::string> never;  // rule label -> why no case can reach it
  std::set<std::string> reached;             // rules some file's cases can reach
  for (const auto& [path, named] : expand_paths(paths)) {
    std::optional<RuleTestFile> file;
    try {
      file = testing::read_rule_test_file(path);
    } catch (const Error& e) {
      out << "FAIL " << path << "\n  " << e.pretty() << "\n";
      ++counts.failed;
      continue;
    }
    if (!file || file->cases.empty()) {
      // A test run that tests nothing must not look like a pass.
      if (named) {
        out << "FAIL " << path << ": holds no test case (a `tests:` list of cases; see docs/rule-tests.md)\n";
        ++counts.failed;
      }
      continue;
    }
    cases_seen += file->cases.size();
    std::optional<RuleSet> rules;
    std::string load_error;
    try {
      rules = load_rule_files(file->rule_files);
    } catch (const Error& e) {
      load_error = e.pretty();
    }
    if (rules) {
      std::vector<Graph> inputs;
      for (const RuleTestCase& tc : file->cases) try {
          if (tc.malformed.empty()) inputs.push_back(testing::load_case_graph(*file, tc.input));
        } catch (const Error&) {
          // The case reports it when it runs.
        }
      // Warned about at the end, for the rule files named one by one (not folders: most
      // of a library never meets one model), unless another file's cases reach the rule.
      std::set<std::string> own;
      for (const std::string& f : file->rule_files)
        if (!fs::is_directory(f)) own.insert(f);
      std::set<std::string> missed;
      for (testing::NeverMatching& m : testing::never_matching_rules(*rules, inputs)) {
        missed.insert(m.rule);
        if (own.count(m.file)) never.emplace(m.rule, std::move(m.message));
      }
      for (const Rule& r : rules->rules())
        if (!missed.count(r.label())) reached.insert(r.label());
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
      if (opt.update && r.updated && !tc.expect_error.present) {
        if (auto u = place_update(*file, tc, std::move(*r.updated))) updates.push_back(std::move(*u));
        else out << "updated " << tc.expect.text << "\n";
      }
    }
    if (!updates.empty()) {
      write_file_atomic(path, testing::apply_expect_updates(*file, updates));
      out << "updated " << updates.size() << " expectation(s) in " << path << "\n";
    }
  }
  for (const auto& [rule, why] : never)
    if (!reached.count(rule)) out << "warning: " << why << "\n";
  if (cases_seen == 0 && counts.failed == 0) {
    out << "FAIL no test case in";
    for (const std::string& p : paths) out << " " << p;
    out << "\n";
    ++counts.failed;
  } else if (!opt.filter.empty() && cases_seen > 0 && counts.skipped == cases_seen) {
    out << "FAIL no case name contains '" << opt.filter << "'\n";
    ++counts.failed;
  }
  out << counts.passed << " passed, " << counts.failed << " failed";
  if (counts.skipped) out << ", " << counts.skipped << " skipped";
  if (counts.verified) out << " (" << counts.verified << " verified numerically)";
  if (counts.unverified) out << ", " << counts.unverified << " not verified numerically";
  out << "\n";
  return counts;
}

}  // namespace graphfuse
