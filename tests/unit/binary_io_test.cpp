// The .gfb binary graph format: exact round trips (every attribute kind, names, types,
// absent inputs, properties), agreement with JSON, stable bytes, and damaged files.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

using namespace graphfuse;

namespace {

/// Every construct the graph model has, written as .graph text.
const char* kEverything = R"(input x, `in.2`
w = Const() {value = tensor(float32, [2, 2], [1.0, -2.5, 3e-05, 0.1])}
s0 = Const() {value = tensor(float32, [64])}
c = Conv2D(x, w) {strides = [2, 2], padding = "VALID", alpha = -0.0, n = -7, on = true, names = ["p", "q r"], bits = [true, false], scales = [1.5, -2.0], none = [], big = tensor(int64, [2], [9223372036854775807, -9223372036854775808])}
a, b, d = Split(c) {axis = 1}
`/m/Fused_out` = com.example.Fused(b, _, `in.2`) {ts = [tensor(int8, [2], [-128, 127]), tensor(bool, [1], [1])], text = "tab\tq\"\n"} as `/m/Fused`
t1, t2 = TopK(`/m/Fused_out`)
r = Relu(t2)
output r, a:2, t1
)";

/// Everything a graph holds, compared by id: ops, attributes (bit-exact floats), inputs,
/// output names and types, graph inputs and outputs, properties.
void expect_same(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  auto name = [](const Graph& g, ValueRef v) { return v.valid() ? g.value_name(v) : std::string("_"); };
  for (NodeId n : a.nodes()) {
    const Node& x = a.node(n);
    auto m = b.find(x.id);
    ASSERT_TRUE(m) << x.id;
    const Node& y = b.node(*m);
    EXPECT_EQ(x.op, y.op) << x.id;
    EXPECT_TRUE(x.attrs == y.attrs) << x.id;
    EXPECT_TRUE(x.outputs == y.outputs) << x.id;
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << x.id;
    for (std::size_t i = 0; i < x.inputs.size(); ++i) EXPECT_EQ(name(a, x.inputs[i]), name(b, y.inputs[i]));
  }
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (std::size_t i = 0; i < a.inputs().size(); ++i) EXPECT_EQ(a.node(a.inputs()[i]).id, b.node(b.inputs()[i]).id);
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (std::size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(name(a, a.outputs()[i]), name(b, b.outputs()[i]));
  EXPECT_TRUE(a.properties() == b.properties());
}

std::string load_error(std::string_view bytes) {
  try {
    parse_graph_binary(bytes, "d.gfb");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(IoBinary, RoundTripsEveryConstruct) {
  Graph g = parse_graph_text(kEverything, "all.graph");
  g.properties().set("opset", std::int64_t{17});
  g.properties().set("producer", std::string("test"));
  ValueType t;
  t.dtype = DType::Float32;
  t.shape = {-1, 3, 224, 224};
  t.shape_known = true;
  t.dim_params = {"N", "", "", ""};
  g.output_infos(*g.find("r"))[0].type = t;
  std::string bytes = write_graph_binary(g);
  Graph back = parse_graph_binary(bytes, "all.gfb");
  expect_same(g, back);
  EXPECT_EQ(back.node(*back.find("r")).outputs[0].type, t);
  const float* alpha = back.node(*back.find("c")).attrs.get_if<float>("alpha");
  ASSERT_TRUE(alpha);
  EXPECT_TRUE(std::signbit(*alpha));  // -0.0 stays -0.0
  EXPECT_FALSE(back.node(*back.find("/m/Fused")).inputs[1].valid());
  EXPECT_EQ(back.source_file, "all.gfb");
  // Stable bytes, and the same text as the graph it came from.
  EXPECT_EQ(write_graph_binary(back), bytes);
  EXPECT_EQ(write_graph_text(back), write_graph_text(g));
  back.validate();
}

TEST(IoBinary, AgreesWithJsonOnAGeneratedGraph) {
  Graph g = generate_cnn_graph(GenerateOptions{5000, 11, true});
  std::string bytes = write_graph_binary(g);
  Graph from_bin = parse_graph_binary(bytes);
  Graph from_json = parse_graph_yaml(write_graph_json(g));
  expect_same(from_json, from_bin);
  EXPECT_EQ(write_graph_json(from_bin), write_graph_json(from_json));
  // Repeated attribute sets are stored once: far smaller than the JSON.
  EXPECT_LT(bytes.size() * 4, write_graph_json(g).size());
  // ... and loaded once: equal sets on loaded nodes are one shared copy.
  std::vector<const Attributes*> convs;
  for (NodeId n : from_bin.nodes())
    if (from_bin.node(n).op.name() == "Conv2D") convs.push_back(&from_bin.node(n).attrs);
  ASSERT_GT(convs.size(), 10u);
  for (const Attributes* a : convs)
    if (*a == *convs[0]) {
      EXPECT_TRUE(a->shares_with(*convs[0]));
    }
}

TEST(IoBinary, GraphsBigEnoughToWarmLoadAlike) {
  // 40,000 nodes: the loaders fault the records' 6 MB in on a second thread (PageWarmer)
  // while they fill them. The graph must come out the same, and a truncated file must
  // still be an error with the warmer running.
  Graph g = generate_cnn_graph(GenerateOptions{40000, 5, true});
  std::string bytes = write_graph_binary(g);
  std::string json = write_graph_json(g);
  Graph from_bin = parse_graph_binary(bytes);
  Graph from_json = parse_graph_yaml(json, "g.json");
  expect_same(g, from_bin);
  expect_same(g, from_json);
  EXPECT_TRUE(write_graph_json(from_bin) == json);  // (not EXPECT_EQ: it would print 3 MB)
  EXPECT_TRUE(write_graph_json(from_json) == json);
  EXPECT_NE(load_error(bytes.substr(0, bytes.size() / 2)), "no error");
}

TEST(IoBinary, RewritingALoadedGraphGivesTheSameResult) {
  RuleSet rules = load_rule_files({std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml"});
  Graph g = generate_cnn_graph(GenerateOptions{3000, 2, true});
  Graph via_json = parse_graph_yaml(write_graph_json(g));
  Graph via_bin = parse_graph_binary(write_graph_binary(g));
  RewriteReport rj = rewrite_graph(via_json, rules);
  RewriteReport rb = rewrite_graph(via_bin, rules);
  EXPECT_GT(rb.rules[0].applied, 0u);
  EXPECT_EQ(rj.rules[0].applied, rb.rules[0].applied);
  EXPECT_EQ(write_graph_json(via_bin), write_graph_json(via_json));
  EXPECT_EQ(write_graph_binary(via_bin), write_graph_binary(parse_graph_binary(write_graph_binary(via_json))));
}

TEST(IoBinary, FilesByExtension) {
  EXPECT_EQ(format_for_path("big.GFB"), GraphFormat::Binary);
  Graph g = parse_graph_text(kEverything, "all.graph");
  auto path = (std::filesystem::temp_directory_path() / "graphfuse_io_binary_test.gfb").string();
  save_graph(g, path);
  Graph back = load_graph(path);
  std::filesystem::remove(path);
  expect_same(g, back);
  EXPECT_EQ(back.source_file, path);
}

TEST(IoBinary, DamagedFilesAreErrors) {
  Graph g = parse_graph_text(kEverything, "all.graph");
  std::string bytes = write_graph_binary(g);
  EXPECT_EQ(load_error("{\"nodes\": []}"), "d.gfb: error: malformed .gfb file: not a .gfb file (it does not start with \"GFB1\") (at byte 0)");
  EXPECT_EQ(load_error(std::string("GFB1") + '\x02'),
            "d.gfb: error: malformed .gfb file: format version 2 is not supported (this graphfuse reads version 1) (at byte 5)");
  // Every truncation is caught, none crashes or yields a smaller graph.
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_NE(load_error(bytes.substr(0, n)), "no error") << "truncated at " << n;
  EXPECT_NE(load_error(bytes + "x").find("does not end where the graph does"), std::string::npos);
  // Flipping any byte either still reads (a different but valid graph) or is an Error.
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    (void)load_error(bad);
  }
  // A duplicate id names the file.
  Graph two;
  two.add_input("x");
  two.add_node("y", OpType::intern("Relu"), {{0, 0}});
  std::string dup = write_graph_binary(two);
  auto at = dup.find("\x01y");
  ASSERT_NE(at, std::string::npos);
  dup[at + 1] = 'x';
  EXPECT_EQ(load_error(dup).rfind("d.gfb: error: malformed .gfb file: duplicate node id 'x'", 0), 0u) << load_error(dup);
}
