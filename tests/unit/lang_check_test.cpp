// `graphfuse check` and the bad rule files under tests/check/: each file states the exact
// error `graphfuse check` prints for it, less "error: " (`# expect: file:line:col: message`).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graphfuse/error_list.h"
#include "graphfuse/rules.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = fs::path(GRAPHFUSE_SOURCE_DIR) / "tests" / "check";

std::string expected_of(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("# expect: ", 0) == 0) return line.substr(10);
  return "";
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// stdout and stderr of a command, and its exit status.
std::pair<std::string, int> run(const std::string& cmd) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  while (std::size_t n = fread(buf.data(), 1, buf.size(), f)) out.append(buf.data(), n);
  int status = pclose(f);
  return {out, WEXITSTATUS(status)};
}

}  // namespace

TEST(LangCheck, EveryBadFileGivesItsDocumentedError) {
  // Paths relative to the repository root, as `graphfuse check tests/check/...` prints them.
  fs::current_path(GRAPHFUSE_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator("tests/check"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::set<std::string> messages;
  for (const fs::path& p : files) {
    SCOPED_TRACE(p.filename().string());
    std::string want = expected_of(p);
    ASSERT_FALSE(want.empty()) << "no `# expect:` line";
    try {
      load_rule_files({p.string()});
      ADD_FAILURE() << "loaded without an error";
      continue;
    } catch (const Error& e) {
      std::string got = e.loc().str() + ": " + e.message();
      EXPECT_EQ(got, want);
      // The caret line is the file's own line at that position.
      auto lines = lines_of(fs::path(e.loc().file.str()));
      ASSERT_GE(e.loc().line, 1);
      ASSERT_LE(static_cast<std::size_t>(e.loc().line), lines.size());
      EXPECT_EQ(e.source_line(), lines[static_cast<std::size_t>(e.loc().line - 1)]);
      messages.insert(e.message());
    }
  }
  EXPECT_GE(files.size(), 15u);
  EXPECT_GE(messages.size(), 15u);  // distinct errors, not one error fifteen times
}

TEST(LangCheck, CommandReportsEachFileWithCaret) {
  std::string cli = GRAPHFUSE_CLI;
  std::string good = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml";
  std::string bad = (kDir / "unknown_rewrite_name.yaml").string();
  auto [ok_out, ok_status] = run(cli + " check " + good);
  EXPECT_EQ(ok_status, 0);
  EXPECT_EQ(ok_out, good + ": 1 rule, ok\n");
  auto [out, status] = run(cli + " check " + bad + " " + good);
  EXPECT_EQ(status, 1);
  // The bad file does not stop the good one from being checked.
  EXPECT_NE(out.find(bad + ":9:15: error: unknown name 'y' in rewrite (not bound by the pattern)\n"
                     "        Sigmoid(y)\n"
                     "                ^\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(good + ": 1 rule, ok"), std::string::npos) << out;
  // A rule-test file without rules of its own is checked through the files it loads.
  std::string cases = std::string(GRAPHFUSE_SOURCE_DIR) + "/tests/rules/seed_cases.yaml";
  auto [cases_out, cases_status] = run(cli + " check " + cases);
  EXPECT_EQ(cases_status, 0);
  EXPECT_EQ(cases_out, cases + ": 1 rule, ok\n");
  auto [prog, prog_status] = run(cli + " check --programs " + good);
  EXPECT_EQ(prog_status, 0);
  EXPECT_NE(prog.find("13  accept"), std::string::npos) << prog;
}

TEST(LangCheck, CheckReportsEveryError) {
  std::string cli = GRAPHFUSE_CLI;
  std::string bad = (kDir / "two_broken_rules.yaml").string();
  auto [out, status] = run(cli + " check " + bad);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.find(bad + ":8:22: error: unknown name 'y' in rewrite"), std::string::npos) << out;
  EXPECT_NE(out.find(bad + ":15:19: error: expected ')' to close the call to Exp"), std::string::npos) << out;
  EXPECT_NE(out.find(bad + ": 2 errors"), std::string::npos) << out;
  // The library throws one ErrorList: the first error, with both in all().
  try {
    load_rule_files({bad});
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    ASSERT_EQ(all_errors(e).size(), 2u);
    EXPECT_EQ(all_errors(e)[0].loc().line, 8);
    EXPECT_EQ(all_errors(e)[1].loc().line, 15);
  }
}
