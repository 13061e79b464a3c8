// Graph files: .graph text, YAML, JSON and DOT. Round trips (byte-identical second writes,
// structurally equal graphs) and every load error with its file:line:column.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "io/graph_text.h"
#include "io/text_values.h"

using namespace graphfuse;

namespace {

/// Structural equality by node id: op, attributes, inputs, outputs, graph inputs/outputs.
std::string diff(const Graph& a, const Graph& b) {
  if (a.size() != b.size()) return "node counts differ";
  auto vref = [](const Graph& g, ValueRef v) {
    return v.valid() ? g.node(v.node).id + ":" + std::to_string(v.port) : std::string("_");
  };
  for (NodeId n : a.nodes()) {
    const Node& x = a.node(n);
    auto m = b.find(x.id);
    if (!m) return "node '" + x.id + "' missing";
    const Node& y = b.node(*m);
    if (x.op != y.op) return "node '" + x.id + "': op";
    if (!(x.attrs == y.attrs)) return "node '" + x.id + "': attributes";
    if (x.outputs != y.outputs) return "node '" + x.id + "': outputs";
    if (x.inputs.size() != y.inputs.size()) return "node '" + x.id + "': input count";
    for (std::size_t i = 0; i < x.inputs.size(); ++i)
      if (vref(a, x.inputs[i]) != vref(b, y.inputs[i])) return "node '" + x.id + "': input " + std::to_string(i);
  }
  if (a.inputs().size() != b.inputs().size()) return "graph inputs";
  for (std::size_t i = 0; i < a.inputs().size(); ++i)
    if (a.node(a.inputs()[i]).id != b.node(b.inputs()[i]).id) return "graph input " + std::to_string(i);
  if (a.outputs().size() != b.outputs().size()) return "graph outputs";
  for (std::size_t i = 0; i < a.outputs().size(); ++i)
    if (vref(a, a.outputs()[i]) != vref(b, b.outputs()[i])) return "graph output " + std::to_string(i);
  return "";
}

/// "file:line:col: message" of the error a load gives.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.loc().str() + ": " + e.message();
  }
  return "no error";
}

std::string text_error(const std::string& text) {
  return error_of([&] { parse_graph_text(text, "g.graph"); });
}
std::string yaml_error(const std::string& text, const std::string& file = "g.yaml") {
  return error_of([&] { parse_graph_yaml(text, file); });
}

/// A graph with every attribute kind, a multi-output node, tensors, an absent optional
/// input, ONNX-style names and a graph output that is not output 0.
const char* kRichText = R"(input x, `input.1`
w = Const() {value = tensor(float32, [2, 2], [1.0, -2.5, 3e-05, 0.1])}
shape_only = Const() {value = tensor(float32, [64])}
conv = Conv2D(x, w) {strides = [1, 1], padding = "SAME", alpha = 0.2, beta = -1.0, group = 1, flag = true, names = ["a", "b c"], flags = [true, false], scales = [1.5, 2.0], empty = [], big = tensor(int64, [2], [9223372036854775807, -9223372036854775808])}
s, s:1, s:2 = Split(conv) {axis = 0}
`/layer1/Conv_output_0` = com.microsoft.FusedConv(s:1, _, `input.1`) {tensors = [tensor(int8, [2], [-128, 127]), tensor(bool, [2], [1, 0])], half = tensor(float16, [3], [0.5, 65504.0, -0.0001]), weird = "tab\tquote\"nl\n"} as `/layer1/Conv`
first, second = TopK(`/layer1/Conv_output_0`)
r = Relu(second)
output r, s:2, first
)";

}  // namespace

TEST(IoText, ReadsEveryConstruct) {
  Graph g = parse_graph_text(kRichText, "rich.graph");
  EXPECT_EQ(g.size(), 9u);
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.node(g.inputs()[1]).id, "input.1");
  NodeId conv = *g.find("conv");
  const Attributes& a = g.node(conv).attrs;
  EXPECT_EQ(*a.get_if<std::vector<std::int64_t>>("strides"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(*a.get_if<std::string>("padding"), "SAME");
  EXPECT_FLOAT_EQ(*a.get_if<float>("alpha"), 0.2f);
  EXPECT_EQ(*a.get_if<std::int64_t>("group"), 1);
  EXPECT_EQ(*a.get_if<bool>("flag"), true);
  EXPECT_EQ(*a.get_if<std::vector<std::string>>("names"), (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(*a.get_if<std::vector<float>>("scales"), (std::vector<float>{1.5f, 2.0f}));
  EXPECT_TRUE(a.get_if<std::vector<std::int64_t>>("empty")->empty());
  EXPECT_EQ(a.get_if<Tensor>("big")->as<std::int64_t>()[0], INT64_MAX);
  EXPECT_EQ(a.get_if<Tensor>("big")->as<std::int64_t>()[1], INT64_MIN);
  NodeId s = *g.find("s");
  EXPECT_EQ(g.node(s).outputs.size(), 3u);
  NodeId fused = *g.find("/layer1/Conv");
  EXPECT_EQ(g.node(fused).op.name(), "com.microsoft.FusedConv");
  EXPECT_EQ(g.node(fused).outputs[0].name, "/layer1/Conv_output_0");
  EXPECT_EQ(g.node(fused).inputs[0], (ValueRef{s, 1}));
  EXPECT_FALSE(g.node(fused).inputs[1].valid());
  EXPECT_EQ(g.node(fused).loc.str(), "rich.graph:6:1");
  NodeId topk = *g.find("first");
  EXPECT_EQ(g.node(topk).outputs[1].name, "second");
  EXPECT_EQ(g.outputs()[1], (ValueRef{s, 2}));
  const Tensor* w = constant_tensor(g, {*g.find("w"), 0});
  ASSERT_TRUE(w);
  EXPECT_EQ(w->as<float>()[1], -2.5f);
  EXPECT_FALSE(g.node(*g.find("shape_only")).attrs.get_if<Tensor>("value")->has_data());
}

TEST(IoText, RoundTripIsByteIdentical) {
  Graph g1 = parse_graph_text(kRichText, "rich.graph");
  std::string t1 = write_graph_text(g1);
  Graph g2 = parse_graph_text(t1, "again.graph");
  EXPECT_EQ(diff(g1, g2), "");
  EXPECT_EQ(write_graph_text(g2), t1);
  EXPECT_NE(t1.find("= com.microsoft.FusedConv(s:1, _, `input.1`)"), std::string::npos) << t1;
  EXPECT_NE(t1.find(" as `/layer1/Conv`\n"), std::string::npos) << t1;
  EXPECT_NE(t1.find("s, s:1, s:2 = Split(conv)"), std::string::npos) << t1;
}

TEST(IoYaml, ReadsTheSeedSchema) {
  const char* seed = R"(inputs: [x]
outputs: [relu]
nodes:
  - {id: relu, op_type: ReLU, inputs: [bias]}
  - {id: x,    op_type: Input}
  - {id: w,    op_type: Const, attributes: {shape: [3, 3, 3, 64]}}
  - {id: b,    op_type: Const, attributes: {shape: [64]}}
  - {id: conv, op_type: Conv2D, inputs: [x, w], attributes: {strides: [1, 1], padding: SAME}}
  - {id: bias, op_type: BiasAdd, inputs: [conv, b]}
)";
  Graph g = parse_graph_yaml(seed, "seed.yaml");
  EXPECT_EQ(g.size(), 6u);
  NodeId conv = *g.find("conv");
  EXPECT_EQ(*g.node(conv).attrs.get_if<std::string>("padding"), "SAME");
  EXPECT_EQ(g.node(conv).loc.str(), "seed.yaml:8:5");
  EXPECT_EQ(g.node(*g.find("relu")).inputs[0], (ValueRef{*g.find("bias"), 0}));
  EXPECT_EQ(g.outputs()[0], (ValueRef{*g.find("relu"), 0}));
  // Producers first, file order otherwise: relu moves after bias.
  std::vector<std::string> ids;
  for (NodeId n : g.nodes()) ids.push_back(g.node(n).id);
  EXPECT_EQ(ids, (std::vector<std::string>{"x", "w", "b", "conv", "bias", "relu"}));
}

TEST(IoYaml, RoundTripsYamlAndJson) {
  Graph g = parse_graph_text(kRichText, "rich.graph");
  g.properties().set("onnx.ir_version", std::int64_t{8});
  g.properties().set("onnx.graph_rest", Opaque{"onnx.GraphProto", std::string("\0\x01\xff", 3)});
  g.output_infos(*g.find("r"))[0].type = ValueType{DType::Float32, {1, -1, 7}, true, {"", "N", ""}};
  g.output_infos(*g.find("x"))[0].type = ValueType{DType::Float16, {}, true, {}};
  for (bool json : {false, true}) {
    SCOPED_TRACE(json ? "json" : "yaml");
    std::string y1 = json ? write_graph_json(g) : write_graph_yaml(g);
    Graph g2 = parse_graph_yaml(y1, json ? "g.json" : "g.yaml");
    EXPECT_EQ(diff(g, g2), "");
    EXPECT_TRUE(g2.properties() == g.properties());
    std::string y2 = json ? write_graph_json(g2) : write_graph_yaml(g2);
    EXPECT_EQ(y2, y1);
    // And across formats: the text written from either is the same.
    EXPECT_EQ(write_graph_text(g2), write_graph_text(g));
  }
  std::string y = write_graph_yaml(g);
  EXPECT_NE(y.find("- {id: s, op_type: Split, inputs: [conv], outputs: [s, s:1, s:2]") , std::string::npos)
      << y;
  EXPECT_NE(y.find("types: [{dtype: float32, shape: [1, \"N\", 7]}]"), std::string::npos) << y;
}

TEST(IoYaml, JsonFromElsewhere) {
  // Hand-written JSON without spaces, forward references and an absent input.
  const char* json = R"({"nodes":[{"id":"y","op_type":"Add","inputs":["x",null,"c"]},
{"id":"x","op_type":"Input"},{"id":"c","op_type":"Const","attributes":{"value":
{"tensor":"int64","shape":[],"data":[7]},"f":1.0,"s":"1"}}],"outputs":["y"]})";
  Graph g = parse_graph_yaml(json, "h.json");
  ASSERT_EQ(g.inputs().size(), 1u);  // no `inputs`: every Input node, in file order
  const Node& y = g.node(*g.find("y"));
  EXPECT_FALSE(y.inputs[1].valid());
  const Attributes& a = g.node(*g.find("c")).attrs;
  EXPECT_EQ(a.get_if<Tensor>("value")->as<std::int64_t>()[0], 7);
  EXPECT_TRUE(a.get_if<float>("f"));
  EXPECT_EQ(*a.get_if<std::string>("s"), "1");  // quoted: a string
}

TEST(IoErrors, TextFile) {
  EXPECT_EQ(text_error("input x\ny = Relu(z)\n"),
            "g.graph:2:10: node 'y': input 0 refers to 'z', which is no node id or output name");
  EXPECT_EQ(text_error("input x\nx = Relu(x)\n"), "g.graph:2:1: duplicate node id 'x' (first defined at g.graph:1:7)");
  EXPECT_EQ(text_error("input x\na = Add(x, b)\nb = Relu(a)\n"),
            "g.graph:2:1: node 'a' is part of a cycle: 'a' -> 'b' -> 'a'");
  EXPECT_EQ(text_error("input x\na = Relu(a)\n"), "g.graph:2:1: node 'a' is part of a cycle: 'a' -> 'a'");
  EXPECT_EQ(text_error("input x\ns, s:1 = Split(x)\ny = Relu(s:2)\n"),
            "g.graph:3:10: node 'y': input 0 refers to output 2 of 's', which has 2 outputs (a node's "
            "`outputs` list gives its output count)");
  EXPECT_EQ(text_error("input x\ny = Relu(x) {k = [1, \"a\"]}\n"),
            "g.graph:2:22: list element 1 is a string, unlike the elements before it (a list holds numbers, "
            "strings, bools or tensors)");
  EXPECT_EQ(text_error("input x\ny = Relu(x) {k = [1, 1e99]}\n"), "g.graph:2:22: float out of float32 range");
  EXPECT_EQ(text_error("input x\ny = Relu(x) {k = [[1]]}\n"), "g.graph:2:19: lists of lists are not attribute values");
  EXPECT_EQ(text_error("input x\ny = Relu(x) {k = 1e99}\n"), "g.graph:2:18: float attribute out of float32 range");
  EXPECT_EQ(text_error("y = C() {v = tensor(flt32, [1])}\n"), "g.graph:1:14: unknown tensor element type 'flt32'");
  EXPECT_EQ(text_error("y = C() {v = tensor(float32, [2], [1.0])}\n"),
            "g.graph:1:14: tensor has 1 values but its shape needs 2");
  EXPECT_EQ(text_error("y = C() {v = tensor(int8, [1], [200])}\n"),
            "g.graph:1:14: value 200 out of range for the tensor's element type");
  EXPECT_EQ(text_error("y = C() {v = x.attr}\n"),
            "g.graph:1:14: attribute values in graph text are literals (numbers, strings, true/false, lists, tensors)");
  EXPECT_EQ(text_error("y = C() {v = 1, v = 2}\n"), "g.graph:1:17: attribute 'v' is set twice");
  EXPECT_EQ(text_error("y = C() {...x}\n"),
            "g.graph:1:10: graph text attributes are `key = value` (`...`, `!key` and comparisons belong in patterns)");
  EXPECT_EQ(text_error("input x\nRelu(x)\n"), "g.graph:2:1: a graph statement needs a name: write `id = Op(...)`");
  EXPECT_EQ(text_error("input x\ny = Relu|Sigmoid(x)\n"),
            "g.graph:2:5: graph text needs one op type (`*` and `A|B` belong in patterns)");
  EXPECT_EQ(text_error("input x\ny = Concat(xs...)\n"), "g.graph:2:12: `name...` belongs in patterns, not in graph text");
  EXPECT_EQ(text_error("input x\n_ = Relu(x)\n"), "g.graph:2:1: `_` cannot name a node (quote it: `` `_` ``)");
  EXPECT_EQ(text_error("input x\ny = Relu(x)\noutput q\n"),
            "g.graph:3:8: graph output 0 refers to 'q', which is no node id or output name");
  EXPECT_EQ(text_error("input x\na, b = Split(x)\nb = Relu(a)\n"),
            "g.graph:2:1: node 'a': output name 'b' clashes with the id of node 'b' at g.graph:3:1");
  EXPECT_EQ(text_error("input x\ny = Relu(x:1)\n"),
            "g.graph:2:10: node 'y': input 0 refers to output 1 of 'x', which has 1 output (a node's "
            "`outputs` list gives its output count)");
  EXPECT_EQ(text_error("input x\ny = Relu(x"), "g.graph:2:11: expected ')' to close the call to Relu");
  // Errors carry the offending line for display.
  try {
    parse_graph_text("input x\ny = Relu(z)\n", "g.graph");
  } catch (const Error& e) {
    EXPECT_EQ(e.source_line(), "y = Relu(z)");
  }
}

TEST(IoErrors, YamlFile) {
  EXPECT_EQ(yaml_error("inputs: [x]\nnodes:\n  - {id: x, op_type: Input}\n  - {id: y, op_type: Relu, inputs: [z]}\n"),
            "g.yaml:4:37: node 'y': input 0 refers to 'z', which is no node id or output name");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: x, op_type: Input}\n  - id: x\n    op_type: Relu\n"),
            "g.yaml:3:5: duplicate node id 'x' (first defined at g.yaml:2:5)");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Add, inputs: [b]}\n  - {id: b, op_type: Relu, inputs: [c]}\n"
                       "  - {id: c, op_type: Relu, inputs: [b]}\n"),
            "g.yaml:3:5: node 'b' is part of a cycle: 'b' -> 'c' -> 'b'");
  const std::string head = "nodes:\n  - {id: a, op_type: Input}\n  - {id: b, op_type: Relu, inputs: [a], attributes: {k: ";
  EXPECT_EQ(yaml_error(head + "[1, x]}}\n"),
            "g.yaml:3:61: node 'b': attribute 'k': list element 1 is a string, unlike the elements before it "
            "(a list holds numbers, strings, bools or tensors)");
  EXPECT_EQ(yaml_error(head + "{x: 1}}}\n"),
            "g.yaml:3:57: node 'b': attribute 'k': a mapping value must be a tensor {tensor: float32, shape: [..], data: [..]}");
  EXPECT_EQ(yaml_error(head + "~}}\n"), "g.yaml:3:57: node 'b': attribute 'k' has no value");
  EXPECT_EQ(yaml_error(head + "[[1]]}}\n"), "g.yaml:3:58: node 'b': attribute 'k': lists of lists are not attribute values");
  EXPECT_EQ(yaml_error(head + "{tensor: float32, shape: [2], data: [1.0]}}}\n"),
            "g.yaml:3:93: node 'b': attribute 'k': tensor has 1 values but its shape needs 2");
  EXPECT_EQ(yaml_error(head + "{tensor: flaot32, shape: [2]}}}\n"),
            "g.yaml:3:66: node 'b': attribute 'k': unknown element type 'flaot32'");
  EXPECT_EQ(yaml_error(head + "1e99}}\n"), "g.yaml:3:57: node 'b': attribute 'k': float out of float32 range");
  EXPECT_EQ(yaml_error(head + "[1, 1e99]}}\n"), "g.yaml:3:61: node 'b': attribute 'k': float out of float32 range");
  EXPECT_EQ(yaml_error(head + "99999999999999999999}}\n"),
            "g.yaml:3:57: node 'b': attribute 'k': integer 99999999999999999999 out of int64 range");
  EXPECT_EQ(yaml_error(head + "!!binary AAA}}\n"),
            "g.yaml:3:57: node 'b': attribute 'k': unsupported YAML tag 'tag:yaml.org,2002:binary'");
  EXPECT_EQ(yaml_error("nodes:\n  - {op_type: Input}\n"), "g.yaml:2:5: node has no `id`");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a}\n"), "g.yaml:2:5: node 'a' has no `op_type`");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input\n"), "g.yaml:3:1: malformed YAML/JSON: end of map flow not found");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input}\n  - {id: s, op_type: Split, inputs: [a]}\n"
                       "  - {id: b, op_type: Relu, inputs: [s:1]}\n"),
            "g.yaml:4:37: node 'b': input 0 refers to output 1 of 's', which has 1 output (a node's `outputs` "
            "list gives its output count)");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input}\n  - {id: s, op_type: Split, inputs: [a], outputs: [p, q]}\n"
                       "  - {id: t, op_type: Split, inputs: [a], outputs: [q, r]}\n"),
            "g.yaml:4:5: node 't': output name 'q' is already an output of node 's'");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input}\n  - {id: s, op_type: Split, inputs: [a], outputs: [p, a]}\n"),
            "g.yaml:3:5: node 's': output name 'a' clashes with the id of node 'a' at g.yaml:2:5");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input}\n  - {id: s, op_type: Split, inputs: [a], outputs: [p, q], types: [{}]}\n"),
            "g.yaml:3:66: node 's': `types` has 1 entries for 2 output(s)");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input, colour: red}\n"),
            "g.yaml:2:29: node: unknown key 'colour' (expected id, op_type, inputs, outputs, attributes, types)");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input, id: b}\n"), "g.yaml:2:29: node: duplicate key 'id'");
  EXPECT_EQ(yaml_error("nodez: []\n"), "g.yaml:1:1: unknown key 'nodez' (expected nodes, inputs, outputs, properties)");
  EXPECT_EQ(yaml_error("- a\n"), "g.yaml:1:1: expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)");
  EXPECT_EQ(yaml_error(""), "g.yaml:1:1: expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)");
  EXPECT_EQ(yaml_error("nodes:\n  - {id: a, op_type: Input}\noutputs: [zz]\n"),
            "g.yaml:3:11: graph output 0 refers to 'zz', which is no node id or output name");
}

TEST(IoErrors, JsonFile) {
  EXPECT_EQ(yaml_error(R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["q"]}]})", "g.json"),
            "g.json:1:87: node 'b': input 0 refers to 'q', which is no node id or output name");
  EXPECT_EQ(yaml_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\"}]\n", "g.json"),
            "g.json:2:1: malformed YAML/JSON: end of map flow not found");
  EXPECT_EQ(yaml_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\"},\n {\"id\": \"a\", \"op_type\": \"Relu\"}]}", "g.json"),
            "g.json:2:2: duplicate node id 'a' (first defined at g.json:1:12)");
  EXPECT_EQ(yaml_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\", \"attributes\": {\"k\": [1, \"x\"]}}]}", "g.json"),
            "g.json:1:68: node 'a': attribute 'k': list element 1 is a string, unlike the elements before it "
            "(a list holds numbers, strings, bools or tensors)");
}

TEST(IoErrors, ValidateSeesLoaderPositions) {
  // Node::loc survives into the graph, so later validation errors name the file position.
  Graph g = parse_graph_text("input x\ny = Relu(x)\n", "v.graph");
  EXPECT_EQ(g.node(*g.find("y")).loc.str(), "v.graph:2:1");
}

TEST(IoFormats, FloatsRoundTripThroughText) {
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (!std::isfinite(f)) continue;
    std::string s = textio::format_float(f, textio::kGraphWords);
    ASSERT_NE(s.find_first_of(".e"), std::string::npos) << s;
    Graph g = parse_graph_text("y = C() {v = " + s + "}\n");
    float back = *g.node(0).attrs.get_if<float>("v");
    ASSERT_EQ(std::memcmp(&back, &f, sizeof f), 0) << s;
  }
  EXPECT_EQ(textio::format_float(1.0f, textio::kYamlWords), "1.0");
  EXPECT_EQ(textio::format_float(-0.0f, textio::kYamlWords), "-0.0");
  EXPECT_EQ(textio::format_float(0.1f, textio::kYamlWords), "0.1");
  EXPECT_EQ(textio::format_float(1e-5f, textio::kYamlWords), "1e-05");
  EXPECT_EQ(textio::format_float(INFINITY, textio::kJsonWords), "Infinity");
}

TEST(IoFormats, NonFiniteFloatsInEveryFormat) {
  Graph g = parse_graph_text("y = C() {a = inf, b = -inf, c = nan, d = [1.0, inf]}\n");
  for (int f = 0; f < 3; ++f) {
    std::string s = f == 0 ? write_graph_text(g) : f == 1 ? write_graph_yaml(g) : write_graph_json(g);
    Graph back = f == 0 ? parse_graph_text(s) : parse_graph_yaml(s);
    const Attributes& a = back.node(0).attrs;
    EXPECT_TRUE(std::isinf(*a.get_if<float>("a")) && *a.get_if<float>("a") > 0) << s;
    EXPECT_TRUE(*a.get_if<float>("b") < 0 && std::isinf(*a.get_if<float>("b"))) << s;
    EXPECT_TRUE(std::isnan(*a.get_if<float>("c"))) << s;
    EXPECT_TRUE(std::isinf(a.get_if<std::vector<float>>("d")->at(1))) << s;
  }
}

TEST(IoFormats, StringsThatLookLikeOtherThings) {
  Graph g = parse_graph_text(
      "y = C() {a = \"true\", b = \"1\", c = \"1.5\", d = \"null\", e = \"a: b\", f = \"\", g = \"- x\", "
      "h = \"#c\", i = \"N\", j = \"\\x01\", k = \".inf\", l = \"[x]\"}\n");
  for (bool json : {false, true}) {
    std::string s = json ? write_graph_json(g) : write_graph_yaml(g);
    Graph back = parse_graph_yaml(s);
    EXPECT_TRUE(back.node(0).attrs == g.node(0).attrs) << s;
  }
}

TEST(IoFiles, FormatForPath) {
  EXPECT_EQ(format_for_path("a/b.graph"), GraphFormat::Text);
  EXPECT_EQ(format_for_path("b.YAML"), GraphFormat::Yaml);
  EXPECT_EQ(format_for_path("b.yml"), GraphFormat::Yaml);
  EXPECT_EQ(format_for_path("b.json"), GraphFormat::Json);
  EXPECT_EQ(format_for_path("m.onnx"), GraphFormat::Onnx);
  EXPECT_EQ(format_for_path("g.dot"), GraphFormat::Dot);
  EXPECT_EQ(format_for_path("frozen.pb"), GraphFormat::GraphDef);
  EXPECT_EQ(error_of([] { format_for_path("notes.txt"); }),
            "notes.txt: unknown graph format '.txt' (expected .graph, .yaml, .yml, .json, .onnx, .pb, .dot or .gfb)");
}

TEST(IoFiles, SaveAndLoadEveryFormat) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("graphfuse_io_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Graph g = parse_graph_text(kRichText);
  for (const char* name : {"g.graph", "g.yaml", "g.json"}) {
    std::string path = (dir / name).string();
    save_graph(g, path);
    Graph back = load_graph(path);
    EXPECT_EQ(diff(g, back), "") << name;
    EXPECT_EQ(back.source_file, path);
  }
  save_graph(g, (dir / "g.dot").string());
  EXPECT_EQ(read_file((dir / "g.dot").string()), write_graph_dot(g));
  EXPECT_NE(error_of([&] { load_graph((dir / "g.dot").string()); }).find("DOT files can be written but not read"),
            std::string::npos);
  // Errors in a file name the file.
  write_file_atomic((dir / "bad.yaml").string(), "nodes:\n  - {id: a, op_type: Relu, inputs: [q]}\n");
  EXPECT_EQ(error_of([&] { load_graph((dir / "bad.yaml").string()); }),
            (dir / "bad.yaml").string() + ":2:37: node 'a': input 0 refers to 'q', which is no node id or output name");
  EXPECT_NE(error_of([&] { load_graph((dir / "missing.graph").string()); }).find("cannot open"), std::string::npos);
  // A failed save leaves the old file untouched and no temporary behind.
  std::string target = (dir / "keep.graph").string();
  write_file_atomic(target, "input x\n");
  Graph bad;
  Tensor odd;
  odd.dtype = DType::String;
  odd.data = std::make_shared<const std::string>("x");
  bad.add_node("c", OpType::intern("Const"), {}, [&] {
    Attributes a;
    a.set("value", odd);
    return a;
  }());
  EXPECT_THROW(save_graph(bad, target), Error);
  EXPECT_EQ(read_file(target), "input x\n");
  EXPECT_THROW(write_file_atomic((dir / "no" / "such" / "dir.graph").string(), "x"), Error);
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.path().filename().string().find(".tmp.") != std::string::npos;
  EXPECT_EQ(entries, 0u);
  fs::remove_all(dir);
}

TEST(IoDot, LabelsAndPorts) {
  Graph g = parse_graph_text("input x\ns, s:1 = Split(x)\ny = Add(s:1, s) {a = 1}\noutput y, s:1\n");
  std::string dot = write_graph_dot(g);
  EXPECT_EQ(dot,
            "digraph graphfuse {\n"
            "  node [shape=box, fontname=\"Helvetica\"];\n"
            "  edge [fontname=\"Helvetica\", fontsize=10];\n"
            "  n0 [label=\"Input\\nx\", shape=ellipse];\n"
            "  n1 [label=\"Split\\ns\"];\n"
            "  n2 [label=\"Add\\ny\"];\n"
            "  n0 -> n1;\n"
            "  n1 -> n2 [taillabel=\"1\"];\n"
            "  n1 -> n2 [headlabel=\"1\"];\n"
            "  out0 [label=\"output 0\", shape=plaintext];\n"
            "  n2 -> out0;\n"
            "  out1 [label=\"output 1\", shape=plaintext];\n"
            "  n1 -> out1 [taillabel=\"1\"];\n"
            "}\n");
  EXPECT_EQ(write_graph_dot(g), dot);
}

TEST(IoText, EmptyAndOddNames) {
  Graph empty = parse_graph_text("");
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(write_graph_text(empty), "");
  EXPECT_EQ(write_graph_yaml(empty), "inputs: []\noutputs: []\nnodes: []\n");
  EXPECT_EQ(parse_graph_yaml(write_graph_json(empty)).size(), 0u);
  // Ids that are keywords or hold odd characters are quoted and come back unchanged.
  Graph g;
  NodeId a = g.add_input("input");
  NodeId b = g.add_node("true", OpType::intern("tensor"), {{a, 0}});
  NodeId c = g.add_node("a`b\\c\nd", OpType::intern("Relu"), {{b, 0}});
  NodeId d = g.add_node("_", OpType::intern("ai.onnx.Relu"), {{c, 0}, {}});
  g.add_output({d, 0});
  std::string t = write_graph_text(g);
  Graph back = parse_graph_text(t);
  EXPECT_EQ(diff(g, back), "") << t;
  EXPECT_EQ(write_graph_text(back), t);
  Graph from_yaml = parse_graph_yaml(write_graph_yaml(g));
  EXPECT_EQ(diff(g, from_yaml), "");
}

TEST(IoText, ReadsValueTypes) {
  Graph g = parse_graph_text(
      "input x: float32[N, 3, 8, 8], u\nw = Const()\nc = Conv(x, w): float32[N, 4, ?, 8]\na, b = Split(c): float16[], int64\n"
      "output a, b\n",
      "t.graph");
  const ValueType& x = g.node(*g.find("x")).outputs[0].type;
  EXPECT_EQ(x.dtype, DType::Float32);
  EXPECT_TRUE(x.shape_known);
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{-1, 3, 8, 8}));
  EXPECT_EQ(x.dim_params, (std::vector<std::string>{"N", "", "", ""}));
  EXPECT_FALSE(g.node(*g.find("u")).outputs[0].type.shape_known);
  const ValueType& c = g.node(*g.find("c")).outputs[0].type;
  EXPECT_EQ(c.shape, (std::vector<std::int64_t>{-1, 4, -1, 8}));
  const Node& split = g.node(*g.find("a"));
  EXPECT_EQ(split.outputs[0].type.dtype, DType::Float16);
  EXPECT_TRUE(split.outputs[0].type.shape_known);
  EXPECT_TRUE(split.outputs[0].type.shape.empty());
  EXPECT_EQ(split.outputs[1].type.dtype, DType::Int64);
  EXPECT_FALSE(split.outputs[1].type.shape_known);
  try {
    parse_graph_text("input x: flaot32[1]\n", "t.graph");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "t.graph:1:10: error: unknown element type 'flaot32' (float32, float16, int64, bool, ...)");
  }
  EXPECT_THROW(parse_graph_text("input x\nc = F(x): float32, float32\n", "t.graph"), Error);  // two types, one output
}

// Every type the reader takes comes back from the writer: typed and untyped inputs, a
// scalar, `?`, symbolic and quoted symbolic dimensions, an untyped output between typed
// ones (`undefined`), types next to attributes and `as id`.
TEST(IoText, ValueTypesRoundTrip) {
  const char* text =
      "input x: float32[N, 3, `batch size`, ?], u, `input`: int64[]\n"
      "w = Const() {value = tensor(float32, [1], [2.0])}: float32[1]\n"
      "c = Conv(x, w) {group = 1}: float16[N, `?`, 0]\n"
      "a, b, d = Split(c): undefined, bool, undefined[2, ?]\n"
      "e, f = Split(u): uint8\n"
      "y = Add(a, `input`): bfloat16[`N`] as `/add`\n"
      "output y, b, d, e, f\n";
  Graph g1 = parse_graph_text(text, "typed.graph");
  EXPECT_EQ(g1.node(*g1.find("x")).outputs[0].type.dim_params, (std::vector<std::string>{"N", "", "batch size", ""}));
  EXPECT_EQ(g1.node(*g1.find("c")).outputs[0].type.dim_params, (std::vector<std::string>{"N", "?", ""}));
  std::string t1 = write_graph_text(g1);
  Graph g2 = parse_graph_text(t1, "again.graph");
  EXPECT_EQ(diff(g1, g2), "") << t1;
  EXPECT_EQ(write_graph_text(g2), t1);
  EXPECT_EQ(t1,
            "input x: float32[N, 3, `batch size`, ?], u, `input`: int64[]\n"
            "w = Const() {value = tensor(float32, [1], [2.0])}: float32[1]\n"
            "c = Conv(x, w) {group = 1}: float16[N, `?`, 0]\n"
            "a, b, d = Split(c): undefined, bool, undefined[2, ?]\n"
            "e, f = Split(u): uint8\n"
            "y = Add(a, `input`): bfloat16[N] as `/add`\n"
            "output y, b, d, e, f\n");
}

// parse_graph_text reads a producers-first file straight into the graph and anything else
// through GraphBuilder: both must give the same graph (same .gfb bytes: node order, ids,
// types, positions) and, for a bad file, the same error.
TEST(IoText, InOrderReadIsTheBuildersRead) {
  auto same = [](const std::string& text, const std::string& what) {
    Graph fast = parse_graph_text(text, "t.graph");
    Graph slow = textio::parse_graph_text_through_builder(text, "t.graph");
    EXPECT_EQ(write_graph_binary(fast), write_graph_binary(slow)) << what;
    EXPECT_EQ(write_graph_text(fast), write_graph_text(slow)) << what;
  };
  same(kRichText, "rich");
  for (FanoutForm form : {FanoutForm::Chains, FanoutForm::Weights, FanoutForm::Shapes})
    same(write_graph_text(generate_fanout_graph(FanoutOptions{2000, form, 50})), "fan-out");
  GenerateOptions cnn;
  cnn.nodes = 500;
  same(write_graph_text(generate_cnn_graph(cnn)), "cnn");
  same("input x: float32[N, 3], k\nc = Const() {value = tensor(int64, [], [1])}\n"
       "a = Add(x, c): float32[N, 3]\nb = Mul(a, x:0) {alpha = 0.5}\noutput b, a, x\n", "typed");
  same("output b\ninput x\nb = Relu(a)\na = Neg(x)\n", "consumer first");
  same("input x\ns, s:1 = Split(x)\nr = Add(s, s:1)\noutput r\n", "two outputs");
  same("input x\n`a:1` = Relu(x)\nb = Neg(`a:1`)\noutput b\n", "a ':' in an id");
  // Named outputs, as ONNX imports write them.
  same("input `in:0`\n`/c/out` = Relu(`in:0`): float32[2] as `/c`\np, q = Split(`/c/out`)\n"
       "`onnx::r` = Add(p, q, `/c`:0, `/c/out`) as r\noutput `onnx::r`, q, `/c`\n", "named outputs");
  same("input x\ns, t = Split(x) as s\nr = Add(s:0, s:1, t)\noutput r\n", "a name and `id:k`");
  for (const char* bad : {"input x\na = Relu(x)\na = Neg(x)\n", "input x\na = Relu(x:1)\n",
                          "input x\noutput y\n", "input x\na = Relu(b)\n", "input x, x\n",
                          "input x\na = Relu(x)\noutput _\n", "x = Input(x)\n",
                          "input x\nb = Relu(x) as a\nb = Neg(x)\n", "input x\nq = Relu(x) as a\nq = Neg(x) as b\n",
                          "input x\n`x:1` = Relu(x) as a\n", "input x\np, a = Split(x) as a\n",
                          "input x\np, q = Split(x)\nr = Relu(q:0)\n"}) {
    std::string fast, slow;
    try {
      parse_graph_text(bad, "t.graph");
    } catch (const Error& e) {
      fast = e.pretty();
    }
    try {
      textio::parse_graph_text_through_builder(bad, "t.graph");
    } catch (const Error& e) {
      slow = e.pretty();
    }
    EXPECT_FALSE(fast.empty()) << bad;
    EXPECT_EQ(fast, slow) << bad;
  }
}

// A graph from elsewhere (ONNX, JSON) may carry what the text cannot name: an element type
// graphfuse knows only by number is refused with the node named, never dropped.
TEST(IoText, WriterRefusesAnElementTypeWithoutAName) {
  Graph g = parse_graph_text("input x\nr = Relu(x)\noutput r\n", "t.graph");
  g.output_infos(*g.find("r"))[0].type.dtype = static_cast<DType>(14);
  try {
    write_graph_text(g);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "t.graph:2:1: error: node 'r', output 0 type: element type number 14 has no name in .graph text (.json, .yaml, .gfb and .onnx keep it)");
  }
}
