// The YAML graph reader's streamed readings (engine/io/yaml_graph_events.h: straight into
// the graph for producers-first files, else into GraphBuilder) against the whole-document
// reading they replace: the same graph (saved bytes, ids, positions, inputs, outputs) for
// every text a streamed reading takes, the same error for every text that fails, and the
// streamed readings really taking the files graphfuse writes.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "io/graph_yaml.h"

using namespace graphfuse;
using textio::YamlReading;

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Everything about a graph the readings must agree on.
std::string facts(const Graph& g) {
  std::string out = write_graph_yaml(g);
  out += "\n--- gfb " + std::to_string(std::hash<std::string>{}(write_graph_binary(g)));
  for (NodeId n = 0; n < g.capacity(); ++n)
    out += "\n" + g.node(n).id + " @ " + g.node(n).loc.str();
  out += "\ninputs";
  for (NodeId n : g.inputs()) out += " " + std::to_string(n);
  out += "\noutputs";
  for (const ValueRef& r : g.outputs()) out += " " + std::to_string(r.node) + ":" + std::to_string(r.port);
  out += "\nsource " + g.source_file;
  return out;
}

/// The outcome of one reading: facts(graph), "error: ...", or "declined".
std::string outcome(const std::string& text, std::optional<YamlReading> how) {
  try {
    if (!how) return facts(parse_graph_yaml(text, "g.yaml"));
    std::optional<Graph> g = textio::parse_graph_yaml_as(text, "g.yaml", *how);
    return g ? facts(*g) : "declined";
  } catch (const Error& e) {
    return "error: " + e.pretty();
  }
}

/// parse_graph_yaml gives exactly what the whole reading gives, and so does each streamed
/// reading that takes the text; `taken_by` names the one expected to (nullopt: none).
void same(const std::string& text, std::optional<YamlReading> taken_by) {
  SCOPED_TRACE(text.substr(0, 300));
  std::string whole = outcome(text, YamlReading::Whole);
  EXPECT_EQ(outcome(text, std::nullopt), whole);
  std::string in_order = outcome(text, YamlReading::InOrder), builder = outcome(text, YamlReading::Builder);
  if (in_order != "declined") {
    EXPECT_EQ(in_order, whole);
  }
  if (builder != "declined") {
    EXPECT_EQ(builder, whole);
  }
  EXPECT_EQ(in_order != "declined", taken_by == YamlReading::InOrder) << in_order;
  if (taken_by != YamlReading::InOrder) {
    EXPECT_EQ(builder != "declined", taken_by == YamlReading::Builder) << builder;
  }
}

}  // namespace

TEST(IoYamlStream, WrittenFilesAreStreamedIntoTheGraph) {
  for (FanoutForm form : {FanoutForm::Chains, FanoutForm::Weights, FanoutForm::Shapes})
    same(write_graph_yaml(generate_fanout_graph(FanoutOptions{2000, form, 50})), YamlReading::InOrder);
  GenerateOptions cnn;
  cnn.nodes = 500;
  same(write_graph_yaml(generate_cnn_graph(cnn)), YamlReading::InOrder);
  // Block style, comments, quoting, tags, anchors no alias uses, properties after the
  // nodes, absent inputs (null and ""), `id:0`, a second document (never read).
  same("# a graph\nproperties:\n  p: !!str 5\n  q: [1, 2.5]\nnodes:\n  - id: x\n    op_type: Input\n"
       "    types:\n      - {dtype: float32, shape: [N, 3]}\n  - &w {id: 'w', op_type: !!str Const,\n"
       "      attributes: {value: {tensor: float32, shape: [2], data: [.5, -.inf]}, s: \"7\", t: !!str 8}}\n"
       "  - id: \"a\"\n    op_type: Add\n    inputs: [x:0, w, null, '', ~]\noutputs: [a, 'x']\n"
       "---\nnot: [read\n",
       YamlReading::InOrder);
  same("nodes: []\n", YamlReading::InOrder);
  // Byte-order marks: UTF-8, and UTF-16 (yaml-cpp converts it).
  same("\xef\xbb\xbfnodes: [{id: a, op_type: Input}]\n", YamlReading::InOrder);
  same(std::string("\xff\xfen\0o\0d\0e\0s\0:\0 \0[\0]\0\n\0", 22), YamlReading::InOrder);
  same("{nodes: [{id: i2, op_type: Input}, {id: i1, op_type: Input}, {id: c, op_type: Const}]}", YamlReading::InOrder);
}

TEST(IoYamlStream, OtherFilesGoThroughTheBuilderOrTheWholeDocument) {
  // Through GraphBuilder: a consumer before its producer, named outputs, a later node whose
  // very id is `a:0`. A graph input that is no node stays in order.
  same("nodes:\n  - {id: b, op_type: Relu, inputs: [a]}\n  - {id: a, op_type: Input}\n", YamlReading::Builder);
  same("nodes:\n  - {id: a, op_type: Input}\n  - {id: s, op_type: Split, inputs: [a], outputs: [p, q]}\n"
       "  - {id: b, op_type: Add, inputs: [q, 's:0']}\noutputs: ['s:1']\n",
       YamlReading::Builder);
  same("inputs: [a, z]\nnodes:\n  - {id: a, op_type: Input}\n  - {id: b, op_type: Relu, inputs: [a]}\n",
       YamlReading::InOrder);
  same("nodes:\n  - {id: a, op_type: Input}\n  - {id: b, op_type: Relu, inputs: ['a:0']}\n  - {id: 'a:0', op_type: Input}\n",
       YamlReading::Builder);
  // The whole document: aliases (expanded by the copy), a key outside the schema, a root
  // that is no mapping, an empty file.
  same("nodes:\n  - &n {id: a, op_type: Input}\n  - {id: b, op_type: Relu, inputs: [a]}\nproperties: {p: *n}\n",
       std::nullopt);
  same("nodes: [{id: a, op_type: Input}]\nzzz: 1\n", std::nullopt);
  same("- {id: a, op_type: Input}\n", std::nullopt);
  same("", std::nullopt);
}

TEST(IoYamlStream, ErrorsAreTheWholeDocumentsErrors) {
  // Each fails; the message and position are the whole reading's, whichever reading stopped.
  for (const char* bad : {
           "nodes:\n  - {id: a, op_type: Input}\n  - {id: a, op_type: Input}\n",   // duplicate id
           "nodes:\n  - {id: a, op_type: Relu, inputs: [q]}\n",                     // unknown reference
           "nodes:\n  - {id: a, op_type: Input}\n  - {id: b}\n",                    // no op_type
           "nodes:\n  - {id: a, op_type: Input, zzz: 1}\n",                         // unknown node key
           "nodes:\n  - {id: a, op_type: C, attributes: {k: [[1]]}}\n",             // bad attribute
           "nodes:\n  - {id: a, op_type: C, attributes: {'': 1}}\n",                // empty attribute name
           "nodes:\n  - {id: a, op_type: Input, inputs: [~]}\n",                    // Input with an input
           "nodes:\n  - {id: a, op_type: Input}\n  - {id: b, op_type: Relu, inputs: [a]}\n  - {id: c, op_t\n",
           "nodes:\n  - {id: b, op_type: Relu, inputs: [a]}\n  - {id: a, op_type: Relu, inputs: [b]}\n",  // cycle
           "nodes:\n  - {id: a, op_type: Input, types: [{dtype: float32}, {dtype: int64}]}\n",
           "nodes: 3\n", "nodes: [{id: a, op_type: Input}]\nnodes: []\n", "inputs: [a, a]\nnodes: [{id: a, op_type: Input}]\n",
           "outputs: [zz]\nnodes: [{id: a, op_type: Input}]\n", "properties: 3\nnodes: []\n", "42\n", "[\n",
           "nodes: [{id: a, op_type: Input}]\nzzz: [1, \n"}) {
    std::string whole = outcome(bad, YamlReading::Whole);
    EXPECT_EQ(whole.substr(0, 7), "error: ") << bad;
    EXPECT_EQ(outcome(bad, std::nullopt), whole) << bad;
    // A streamed reading stops (its errors are never shown), or for malformed YAML gives the
    // very error the whole reading gives (the same parser stops at the same place).
    for (YamlReading how : {YamlReading::InOrder, YamlReading::Builder}) {
      std::string streamed = outcome(bad, how);
      EXPECT_TRUE(streamed == "declined" || (streamed == whole && whole.find("malformed YAML") != std::string::npos))
          << bad << "\n" << streamed;
    }
  }
  // Issue 16's regression inputs: the alias bound and the nesting bound stay the whole
  // reading's (docs/limits.md).
  for (const char* name : {"regress-billion_laughs.yaml", "regress-deep_nesting.yaml"}) {
    std::string text = slurp(std::filesystem::path(GRAPHFUSE_SOURCE_DIR) / "fuzz/corpus/graph_yaml" / name);
    ASSERT_FALSE(text.empty()) << name;
    std::string whole = outcome(text, YamlReading::Whole);
    EXPECT_EQ(whole.substr(0, 7), "error: ") << name;
    EXPECT_EQ(outcome(text, std::nullopt), whole) << name;
  }
}

TEST(IoYamlStream, MutatedCorpusReadsAsTheWholeDocument) {
  // The fuzz corpus and byte-level mutations of it (flip, insert, delete, duplicate a span):
  // parse_graph_yaml's outcome is always the whole reading's.
  std::mt19937 rng(18);
  const char kBytes[] = "-:{}[],'\"&*!#|>?~ \n\tx0";
  int mutated = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(GRAPHFUSE_SOURCE_DIR) / "fuzz/corpus/graph_yaml")) {
    std::string text = slurp(entry.path());
    if (text.size() > 20000 || entry.path().filename().string().rfind("regress-", 0) == 0) continue;
    std::string whole = outcome(text, YamlReading::Whole);
    EXPECT_EQ(outcome(text, std::nullopt), whole) << entry.path();
    if (whole.rfind("error: ", 0) != 0) {  // a graph: one of the streamed readings takes it
      EXPECT_TRUE(outcome(text, YamlReading::InOrder) == whole || outcome(text, YamlReading::Builder) == whole)
          << entry.path();
    }
    for (int k = 0; k < 60; ++k) {
      std::string m = text;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !m.empty(); --edits) {
        std::size_t at = rng() % m.size();
        switch (rng() % 4) {
          case 0: m[at] = kBytes[rng() % (sizeof kBytes - 1)]; break;
          case 1: m.insert(at, 1, kBytes[rng() % (sizeof kBytes - 1)]); break;
          case 2: m.erase(at, 1 + rng() % 8); break;
          default: m.insert(at, m.substr(rng() % m.size(), 1 + rng() % 40)); break;
        }
      }
      SCOPED_TRACE(entry.path().filename().string() + " mutation " + std::to_string(k));
      EXPECT_EQ(outcome(m, std::nullopt), outcome(m, YamlReading::Whole));
      ++mutated;
    }
  }
  EXPECT_GT(mutated, 1000);
}
