// Rule files' YAML for the loader (engine/rules/rule_yaml.h): the `tests:` block left out
// without moving anything else, and files parsed on a second thread giving the same trees.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rules/rule_yaml.h"

namespace gr = graphfuse::rules;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Equal kinds, scalars, order of entries and marks; `skip` is a top-level key whose value
// is not compared (the tests block).
void expect_same(const YAML::Node& a, const YAML::Node& b, const std::string& where, const std::string& skip = "") {
  ASSERT_EQ(a.Type(), b.Type()) << where;
  EXPECT_EQ(a.Mark().line, b.Mark().line) << where;
  EXPECT_EQ(a.Mark().column, b.Mark().column) << where;
  if (a.IsScalar()) {
    EXPECT_EQ(a.Scalar(), b.Scalar()) << where;
  }
  if (a.IsSequence()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same(a[i], b[i], where + "[" + std::to_string(i) + "]");
  }
  if (a.IsMap()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
      const std::string k = i->first.Scalar();
      expect_same(i->first, j->first, where + " key " + k);
      if (k != skip) {
        expect_same(i->second, j->second, where + "." + k);
      }
    }
  }
}

}  // namespace

TEST(RuleYaml, TestsBlockIsBlankedInPlace) {
  const std::string text =
      "rules:\n  - name: a\n    pattern: |\n      Relu(x)\ntests:\n  - name: t\n    graph: |\n"
      "      x = Input()\n# a comment\n- at column zero\n\nops:\n  Add: {commutative: true}\n";
  const std::string cut = gr::without_tests(text);
  EXPECT_EQ(cut,
            "rules:\n  - name: a\n    pattern: |\n      Relu(x)\ntests:\n\n\n\n\n\n\nops:\n  Add: {commutative: true}\n");
  const YAML::Node n = YAML::Load(cut);
  EXPECT_TRUE(n["tests"].IsNull());
  EXPECT_EQ(n["ops"].Mark().line, 12);
}

TEST(RuleYaml, OnlyATopLevelBlockIsCut) {
  // An inline value, a nested `tests:` key, a key that merely starts with "tests": kept.
  for (const std::string text : {"rules: []\ntests: [a, b]\n", "rules:\n  tests:\n    - x\n",
                                 "rules: []\ntests_more:\n  - x\n", "rules: []\n"})
    EXPECT_EQ(gr::without_tests(text), text) << text;
  // A comment after the key, CRLF line ends, a document marker ending the block.
  EXPECT_EQ(gr::without_tests("tests: # later\r\n  - a\r\n---\n"), "tests: # later\r\n\n---\n");
}

TEST(RuleYaml, BrokenTextReportsTheFilesOwnError) {
  // The tests block is broken: the shorter text parses, the loader never reads the tests.
  EXPECT_NO_THROW(gr::parse_rule_yaml("rules: []\ntests:\n  - [unclosed\n"));
  // A break outside it is reported where the file has it.
  try {
    gr::parse_rule_yaml("rules: [\ntests:\n  - a\n");
    FAIL() << "no error";
  } catch (const YAML::ParserException& e) {
    const YAML::Mark whole = [] {
      try {
        YAML::Load("rules: [\ntests:\n  - a\n");
      } catch (const YAML::ParserException& w) {
        return w.mark;
      }
      return YAML::Mark{};
    }();
    EXPECT_EQ(e.mark.line, whole.line);
    EXPECT_EQ(e.mark.column, whole.column);
  }
}

TEST(RuleYaml, EveryRuleFileParsesAsYamlCppReadsIt) {
  // Everything but the tests block: same nodes, same marks, on every rule library.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(GRAPHFUSE_SOURCE_DIR) + "/rules")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string text = read(e.path());
    expect_same(gr::parse_rule_yaml(text), YAML::Load(text), e.path().string(), "tests");
    ++files;
  }
  EXPECT_GT(files, 20);
}

TEST(RuleYaml, PoolGivesEachFileItsTreeOrItsError) {
  std::vector<gr::RuleYamlPool::Input> in;
  std::vector<std::string> texts;
  for (int i = 0; i < 9; ++i) {
    texts.push_back("rules:\n  - name: r" + std::to_string(i) + "\ntests:\n  - x\n");
    in.push_back({"/f" + std::to_string(i), texts.back()});
  }
  in.push_back({"/bad", "rules: [\n"});
  gr::RuleYamlPool pool(in);
  for (int i = 0; i < 9; ++i) {
    const YAML::Node n = pool.take("/f" + std::to_string(i), texts[static_cast<std::size_t>(i)]);
    expect_same(n, gr::parse_rule_yaml(texts[static_cast<std::size_t>(i)]), "f" + std::to_string(i));
  }
  EXPECT_THROW(pool.take("/bad", "rules: [\n"), YAML::ParserException);
  // Another text under a pooled name, a name not in the pool, a file taken twice: parsed here.
  EXPECT_EQ(pool.take("/f0", "rules: [1]\n")["rules"][0].Scalar(), "1");
  EXPECT_EQ(pool.take("/other", "rules: [2]\n")["rules"][0].Scalar(), "2");
  EXPECT_EQ(pool.take("/f1", texts[1])["rules"][0]["name"].Scalar(), "r1");
}

TEST(RuleYaml, CommentLinesAreBlankedOutsideScalars) {
  EXPECT_EQ(gr::without_comment_lines("# head\nrules:\n  # one\n  - name: a\n    pattern: |\n      Relu(x)\n"
                                      "      # the DSL's own\n  # after\n"),
            "\nrules:\n\n  - name: a\n    pattern: |\n      Relu(x)\n      # the DSL's own\n\n");
  // A quoted scalar going on past its line: nothing after it is touched.
  const std::string quoted = "doc: \"two\n  # lines\"\n# c\n";
  EXPECT_EQ(gr::without_comment_lines(quoted), quoted);
  EXPECT_EQ(YAML::Load(gr::without_comment_lines(quoted))["doc"].Scalar(), YAML::Load(quoted)["doc"].Scalar());
  // A scalar keeping trailing blank lines: nothing after it is touched.
  const std::string keep = "a: |+\n  x\n# c\nb: 1\n";
  EXPECT_EQ(gr::without_comment_lines(keep), keep);
  // Quotes closed on their line, an apostrophe inside a word: the comment goes.
  EXPECT_EQ(gr::without_comment_lines("doc: 'it''s' \"q\" don't\n# c\n"), "doc: 'it''s' \"q\" don't\n\n");
}
