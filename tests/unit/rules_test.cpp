// Rule-file loading and pattern/rewrite compilation: values, defaults, positioned errors.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "graphfuse/rules.h"
#include "match/program.h"

using namespace graphfuse;

namespace {

// The Error a rules text produces ("" when it loads), as "line:col: message".
std::string load_error(const std::string& yaml) {
  try {
    load_rules_from_string(yaml, "t.yaml");
  } catch (const Error& e) {
    return std::to_string(e.loc().line) + ":" + std::to_string(e.loc().column) + ": " + e.message();
  }
  return "";
}

// A one-rule file around a pattern and a rewrite (block scalars, content at column 7).
std::string rule(const std::string& pattern, const std::string& rewrite) {
  auto indent = [](const std::string& s) {
    std::string out;
    std::size_t start = 0;
    while (start < s.size()) {
      std::size_t end = s.find('\n', start);
      if (end == std::string::npos) end = s.size();
      out += "      " + s.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return out;
  };
  return "rules:\n"
         "  - name: r\n"
         "    pattern: |\n" +
         indent(pattern) + "    rewrite: |\n" + indent(rewrite);
}

}  // namespace

TEST(RuleLoader, LoadsSeedFile) {
  std::string path = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml";
  RuleSet rs = load_rule_files({path});
  ASSERT_EQ(rs.size(), 1u);
  const Rule& r = rs[0];
  EXPECT_EQ(r.name, "conv2d_biasadd_relu");
  EXPECT_EQ(r.doc, "Conv2D -> BiasAdd -> ReLU becomes one fused convolution.");
  EXPECT_EQ(r.benefit, 1);
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.loc.file, path);
  EXPECT_EQ(r.loc.line, 4);
  EXPECT_EQ(r.pattern_loc.line, 7);
  EXPECT_EQ(r.pattern_loc.column, 7);
  EXPECT_EQ(r.rewrite_loc.line, 11);
  EXPECT_EQ(r.root_ops, std::vector<OpType>{OpType::intern("ReLU")});
  EXPECT_EQ(r.depth, 2);
  EXPECT_EQ(r.label(), path + ":4 conv2d_biasadd_relu");
  ASSERT_EQ(rs.files().size(), 1u);
  EXPECT_EQ(rs.files()[0].tests_line, 13);  // rule tests, run by `graphfuse test`
  EXPECT_EQ(rs.rules_for(OpType::intern("ReLU")).size(), 1u);
  EXPECT_TRUE(rs.rules_for(OpType::intern("Conv2D")).empty());
  EXPECT_EQ(rs.max_depth(), 2);
}

TEST(RuleLoader, BenefitEnabledAndTests) {
  RuleSet rs = load_rules_from_string(
      "rules:\n"
      "  - {name: a, pattern: \"Relu(x)\", rewrite: \"x\", benefit: 5, enabled: false}\n"
      "  - name: b\n"
      "    pattern: \"*(x)\"\n"
      "    rewrite: \"x\"\n"
      "tests:\n"
      "  - {name: t, input: x, expect: unchanged}\n",
      "f.yaml");
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].benefit, 5);
  EXPECT_FALSE(rs[0].enabled);
  EXPECT_EQ(rs.enabled(), std::vector<std::uint32_t>{1});
  EXPECT_TRUE(rs[1].root_ops.empty());  // `*` root: indexed under every op
  auto relu = rs.rules_for(OpType::intern("Relu"));
  EXPECT_EQ(std::vector<std::uint32_t>(relu.begin(), relu.end()), (std::vector<std::uint32_t>{0, 1}));
  auto other = rs.rules_for(OpType::intern("Tanh"));
  EXPECT_EQ(std::vector<std::uint32_t>(other.begin(), other.end()), std::vector<std::uint32_t>{1});
  EXPECT_EQ(rs.files()[0].tests_line, 6);
  EXPECT_NE(rs.files()[0].text.find("tests:"), std::string::npos);
  EXPECT_NE(rs.find("b"), nullptr);
  EXPECT_EQ(rs.find("zz"), nullptr);
}

TEST(RuleLoader, FileErrors) {
  EXPECT_EQ(load_error("rules:\n  - name: a\n    pattern: \"Relu(x)\"\n    rewrite: x\n    bogus: 1\n"),
            "5:5: unknown key 'bogus' in rule (expected name, doc, pattern, rewrite, where, benefit, priority, enabled or "
            "on_external_use)");
  EXPECT_EQ(load_error("rules:\n  - name: a\n    pattern: \"Relu(x)\"\n"), "2:5: rule is missing 'rewrite'");
  EXPECT_EQ(load_error("rulez: []\n"), "1:1: unknown top-level key 'rulez' (expected rules, include, ops, tests or load); did you mean 'rules'?");
  EXPECT_EQ(load_error("rules:\n  - {name: a, pattern: \"Relu(x)\", rewrite: x, benefit: lots}\n"),
            "2:56: 'benefit' must be an integer");
  EXPECT_EQ(load_error("rules:\n  - {name: 'a b', pattern: \"Relu(x)\", rewrite: x}\n"),
            "2:12: rule name 'a b' must be letters, digits, '_', '.' or '-', starting with a letter");
  EXPECT_EQ(load_error("rules:\n  - {name: a, name: b, pattern: \"Relu(x)\", rewrite: x}\n"),
            "2:15: duplicate key 'name' (first at line 2)");
  std::string bad_yaml = load_error("rules:\n  - name: [a\n");
  EXPECT_EQ(bad_yaml.substr(0, 2), "3:") << bad_yaml;
  EXPECT_EQ(load_error(""), "1:1: a rule file is a mapping with a `rules:` list");
}

TEST(RuleLoader, DuplicateRuleNameNamesBothPlaces) {
  std::string err = load_error(
      "rules:\n"
      "  - {name: same, pattern: \"Relu(x)\", rewrite: x}\n"
      "  - {name: same, pattern: \"Tanh(x)\", rewrite: x}\n");
  EXPECT_EQ(err, "3:12: duplicate rule name 'same' (first defined at t.yaml:2:12)");
}

TEST(RuleLoader, DuplicateAcrossFilesAndMissingFile) {
  // Two files defining the same rule name: the second is reported with the first's place.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "graphfuse_duplicate_rule_files";
  std::filesystem::create_directories(dir);
  const std::string seed = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml";
  const std::string copy = (dir / "copy.yaml").string();
  std::filesystem::copy_file(seed, copy, std::filesystem::copy_options::overwrite_existing);
  try {
    load_rule_files({seed, copy});
    FAIL() << "duplicate not reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().line, 4);
    EXPECT_NE(e.message().find("first defined at " + seed + ":4:11"), std::string::npos) << e.what();
  }
  // One file named twice (or reached again through a folder) is loaded once.
  EXPECT_EQ(load_rule_files({seed, seed}).size(), load_rule_files({seed}).size());
  std::filesystem::remove_all(dir);
  try {
    load_rule_files({"/nonexistent/rules.yaml"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/rules.yaml: error: cannot read rule file");
  }
}

TEST(RuleLoader, DirectoryLoadsEveryYamlFileInPathOrder) {
  // The ONNX library as a directory is the same rule set as its files listed by hand.
  const std::string dir = std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/onnx";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  RuleSet by_dir = load_rule_files({dir});
  RuleSet by_files = load_rule_files(files);
  ASSERT_EQ(by_dir.size(), by_files.size());
  ASSERT_GT(by_dir.size(), 10u);
  for (std::size_t i = 0; i < by_dir.size(); ++i) EXPECT_EQ(by_dir.rules()[i].name, by_files.rules()[i].name);

  const std::filesystem::path empty = std::filesystem::temp_directory_path() / "graphfuse_empty_rule_dir";
  std::filesystem::create_directories(empty);
  try {
    load_rule_files({empty.string()});
    FAIL() << "an empty rule directory loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), empty.string() + ": error: rule directory holds no .yaml file");
  }
  std::filesystem::remove(empty);
}

TEST(RuleLoader, MalformedPatternPointsIntoBlockScalar) {
  // Pattern content starts on file line 4 at column 7; the missing ')' is on line 5.
  std::string yaml = rule("conv = Conv2D(x, w)\nReLU(conv", "x");
  try {
    load_rules_from_string(yaml, "bad.yaml");
    FAIL() << "malformed pattern accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().file, "bad.yaml");
    EXPECT_EQ(e.loc().line, 5);
    EXPECT_GE(e.loc().column, 7);
    EXPECT_EQ(e.source_line(), "      ReLU(conv");
    EXPECT_EQ(std::string(e.what()).rfind("bad.yaml:5:", 0), 0u) << e.what();
  }
}

TEST(RuleLoader, QuotedScalarColumns) {
  // `Q` is unknown (upper-case and unbound); the string's text starts after the quote.
  std::string err = load_error("rules:\n  - {name: a, pattern: \"Relu(Q)\", rewrite: x}\n");
  EXPECT_EQ(err.substr(0, 5), "2:30:") << err;
}

TEST(RuleCompile, PatternErrors) {
  EXPECT_EQ(load_error(rule("a = Relu(x)\na = Tanh(x)\nAdd(a, x)", "x")),
            "5:7: 'a' is bound twice (first at line 4:7)");
  EXPECT_EQ(load_error(rule("a = Relu(x)\nb = Tanh(x)\nAdd(b, x)", "x")),
            "4:7: pattern node 'a' is not reachable from the root (the last statement)");
  EXPECT_EQ(load_error(rule("a = Relu(b)\nb = Tanh(a)\nAdd(a, x)", "x")),
            "5:16: the pattern has a cycle through 'a'");
  EXPECT_EQ(load_error(rule("Relu(Weights)", "Weights")),
            "4:12: unknown name 'Weights': leaves are lower-case names, pattern nodes are bound with "
            "`Weights = Op(...)`");
  EXPECT_EQ(load_error(rule("Relu(x:1)", "x")),
            "4:12: 'x' is a leaf (it binds a whole value); `x:1` needs a pattern node bound to 'x'");
  EXPECT_EQ(load_error(rule("Relu(x)\nTanh(x)", "x")),
            "4:7: only the last statement (the root) may be unbound; bind this call with `name = ...`");
  EXPECT_EQ(load_error(rule("Relu(x) {...x}", "x")),
            "4:16: `...x` copies attributes in a rewrite; it has no meaning in a pattern");
}

TEST(RuleCompile, RewriteErrors) {
  EXPECT_EQ(load_error(rule("Relu(x)", "Tanh(y)")), "6:12: unknown name 'y' in rewrite (not bound by the pattern)");
  EXPECT_EQ(load_error(rule("Relu(x)", "_")),
            "6:7: `_` matches anything in a pattern; in a rewrite it only stands for an absent input of a call "
            "(`FusedConv(x, w, _, z)`)");
  EXPECT_EQ(load_error(rule("r = Relu(x)", "Tanh(r)")),
            "6:12: the rewrite cannot read the root 'r': the replacement takes the root's place");
  EXPECT_EQ(load_error(rule("Relu(x)", "Tanh(x) {...x}")), "6:16: `...` spread needs a pattern node; 'x' is a leaf (a value)");
  EXPECT_EQ(load_error(rule("Relu(x)", "Tanh|Sigmoid(x)")),
            "6:7: a rewrite creates one op; alternatives (`A|B`) belong in patterns");
  EXPECT_EQ(load_error(rule("Relu(x)", "t = Tanh(x)\nSigmoid(x)")),
            "6:11: 't' is created but never used by the replacement");
  EXPECT_EQ(load_error(rule("Relu(x)", "x = Tanh(x)\nx")),
            "6:7: 'x' is already bound by the pattern; choose another name");
  EXPECT_EQ(load_error(rule("c = Conv(x, w)\nRelu(c)", "Fused(x, w) {k = c.missing, ...q}")),
            "7:35: unknown name 'q' in rewrite (not bound by the pattern)");
}

TEST(RuleCompile, ProgramShape) {
  RuleSet rs = load_rules_from_string(rule("conv = Conv2D(x, w) {padding = \"SAME\"}\nbias = BiasAdd(conv, b)\nReLU(bias)",
                                           "Fused(x, w, b) {...conv, activation = \"ReLU\", src = bias.op_type}"));
  const match::CompiledRule& c = *rs[0].compiled;
  const match::MatchProgram& p = c.match;
  EXPECT_EQ(p.num_node_regs, 3u);
  EXPECT_EQ(p.node_names, (std::vector<std::string>{"", "bias", "conv"}));
  EXPECT_EQ(p.internal_uses, (std::vector<std::uint32_t>{0, 1, 1}));
  EXPECT_EQ(p.leaf_regs.size(), 3u);  // x, w, b
  EXPECT_EQ(p.attr_checks.size(), 1u);
  EXPECT_EQ(p.code.back().op, match::Opcode::Accept);
  // Anchored on the root: its op is the first check.
  EXPECT_EQ(p.code.front().op, match::Opcode::CheckOp);
  ASSERT_EQ(c.rewrite.nodes.size(), 1u);
  EXPECT_FALSE(c.rewrite.erase);
  EXPECT_EQ(c.rewrite.nodes[0].attrs.size(), 3u);
}

TEST(RuleCompile, SeedProgramListing) {
  RuleSet rs = load_rule_files({std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml"});
  EXPECT_EQ(match::disassemble(rs[0].compiled->match),
            "0  check_op   n0 in {ReLU}\n"
            "1  arity      n0 has 1 inputs\n"
            "2  load       v0 = input 0 of n0\n"
            "3  producer   n1(bias) = producer of v0 (output 0)\n"
            "4  check_op   n1(bias) in {BiasAdd}\n"
            "5  arity      n1(bias) has 2 inputs\n"
            "6  load       v1 = input 0 of n1(bias)\n"
            "7  producer   n2(conv) = producer of v1 (output 0)\n"
            "8  check_op   n2(conv) in {Conv2D}\n"
            "9  arity      n2(conv) has 2 inputs\n"
            "10  load       v2 = input 1 of n1(bias)\n"
            "11  load       v3 = input 0 of n2(conv)\n"
            "12  load       v4 = input 1 of n2(conv)\n"
            "13  accept\n");
}
