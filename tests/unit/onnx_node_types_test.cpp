// Types for the nodes rewrites create in ONNX graphs: libonnx's per-op inference, run by the
// rewriter on each created node (graphfuse/type_inference.h, engine/io/onnx_node_types.cpp).
#include <gtest/gtest.h>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"

using namespace graphfuse;

namespace {

// A Transpose sinks below a Relu (the Relu is created on the NCHW value), a Flatten becomes
// a Reshape by a created constant shape (the Reshape takes the Flatten over), and an Add of
// two values of the same shape becomes a Sum: the last rule reads shapes of created values.
const char* kRules = R"(
rules:
  - name: sink
    pattern: |
      t = Transpose(x)
      Relu(t)
    where: has(t.perm)
    rewrite: |
      y = Relu(x)
      Transpose(y) {...t}
  - name: flatten
    pattern: Flatten(x)
    rewrite: |
      s = Const() {value = as_tensor([1, -1])}
      Reshape(x, s)
  - name: same_shape_add
    pattern: |
      r = Relu(a)
      Add(r, b)
    where: same_shape(r, b)
    rewrite: Sum(Relu(a), b)
)";

// x is NCHW [1, 3, 4, 5]; t its NHWC form; z NCHW like x; f (untyped) flattens z.
const char* kGraph = R"(
input x: float32[1, 3, 4, 5]
input z: float32[1, 3, 4, 5]
t = Transpose(x) {perm = [0, 2, 3, 1]}
r = Relu(t)
back = Transpose(r) {perm = [0, 3, 1, 2]}
f = Flatten(z)
output back, f
)";

void import_onnx_opsets(Graph& g, std::int64_t version = 17) {
  g.properties().set(std::string(onnx_io::kOpsetDomains), std::vector<std::string>{""});
  g.properties().set(std::string(onnx_io::kOpsetVersions), std::vector<std::int64_t>{version});
}

const ValueType& type_of(const Graph& g, const std::string& id) { return g.node(*g.find(id)).outputs[0].type; }

const RuleSet& rules() {
  static const RuleSet rs = load_rules_from_string(kRules, "<node types>");
  return rs;
}

}  // namespace

TEST(OnnxNodeTypes, CreatedNodesGetTheTypesOnnxInfers) {
  Graph g = parse_graph_text(kGraph);
  import_onnx_opsets(g);
  RewriteOptions opt;
  opt.only_rules = {"sink", "flatten"};
  rewrite_graph(g, rules(), opt);
  // The Relu created on x has x's NCHW shape, not the NHWC shape of the Relu it replaced.
  const ValueType& y = type_of(g, "r/y");
  EXPECT_EQ(y.dtype, DType::Float32);
  ASSERT_TRUE(y.shape_known);
  EXPECT_EQ(y.shape, (std::vector<std::int64_t>{1, 3, 4, 5}));
  // The Reshape took the untyped Flatten over: inferred from the created constant's value.
  EXPECT_EQ(g.node(*g.find("f")).op.name(), "Reshape");
  EXPECT_EQ(type_of(g, "f").shape, (std::vector<std::int64_t>{1, 60}));
  // Listed as inferred: export writes no value_info for them, as for import's types.
  const auto* names = g.properties().get_if<std::vector<std::string>>(onnx_io::kInferredValues);
  ASSERT_NE(names, nullptr);
  EXPECT_NE(std::find(names->begin(), names->end(), "r/y"), names->end());
  const std::string bytes = onnx_io::serialize_model(g);
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  for (const auto& vi : m.graph().value_info()) EXPECT_NE(vi.name(), "r/y");
}

TEST(OnnxNodeTypes, ARuleReadingACreatedValuesShapeFires) {
  // The Relu that `sink` creates on x feeds, once the Transposes cancel, an Add whose other
  // operand has its shape: same_shape(r, b) reads the created value's type.
  const char* graph = R"(
input x: float32[1, 3, 4, 5]
input z: float32[1, 3, 4, 5]
t = Transpose(x) {perm = [0, 2, 3, 1]}
r = Relu(t)
back = Transpose(r) {perm = [0, 3, 1, 2]}
a = Add(back, z)
output a
)";
  const char* cancel = R"(
rules:
  - name: cancel
    pattern: |
      t1 = Transpose(x)
      t2 = Transpose(t1)
    where: compose(t1.perm, t2.perm) == range(len(t1.perm))
    rewrite: x
)";
  RuleSet rs = load_rules_from_string(std::string(kRules) + std::string(cancel).substr(std::string(cancel).find("  - name")),
                                      "<node types + cancel>");
  for (bool onnx : {true, false}) {
    Graph g = parse_graph_text(graph);
    if (onnx) import_onnx_opsets(g);
    RewriteOptions opt;
    opt.only_rules = {"sink", "cancel", "same_shape_add"};
    rewrite_graph(g, rs, opt);
    // ONNX graph: Sum; a graph without a format's type inference: the Add stays.
    EXPECT_EQ(g.node(*g.find("a")).op.name(), onnx ? "Sum" : "Add") << (onnx ? "onnx" : "no format");
  }
}

TEST(OnnxNodeTypes, GraphsOfOtherFormatsAreNotTyped) {
  Graph g = parse_graph_text(kGraph);  // no ONNX opset import: a TF or hand-written graph
  RewriteOptions opt;
  opt.only_rules = {"sink"};
  rewrite_graph(g, rules(), opt);
  const ValueType& y = type_of(g, "r/y");
  EXPECT_EQ(y.dtype, DType::Undefined);
  EXPECT_FALSE(y.shape_known);
}

TEST(OnnxNodeTypes, WhatOnnxCannotTypeStaysUnknown) {
  // An untyped input, an op without a schema (a custom domain), an invalid node (Conv whose
  // weight has a higher rank than its input: libonnx's inference would read past the
  // input's dims) and a node that fails ONNX's checks (Relu with two inputs): no type, no
  // crash, no error.
  const char* rules_text = R"(
rules:
  - name: remake
    pattern: Neg(x)
    rewrite: |
      a = Relu(x)
      b = com.example.Custom(x)
      w = Const() {value = tensor(float32, [1, 1, 1, 1, 1, 1], [1.0])}
      c = Conv(x, w)
      d = Relu(x, x)
      Sum(a, b, c, d)
)";
  RuleSet rs = load_rules_from_string(rules_text, "<remake>");
  Graph g = parse_graph_text(R"(
input x: float32[1, 1, 4, 4]
input u
n = Neg(x)
m = Neg(u)
output n, m
)");
  import_onnx_opsets(g);
  rewrite_graph(g, rs);
  EXPECT_EQ(type_of(g, "n/a").shape, (std::vector<std::int64_t>{1, 1, 4, 4}));
  for (const char* id : {"n/b", "n/c", "n/d", "m/a", "m/b", "m/c", "m/d"}) {
    EXPECT_EQ(type_of(g, id).dtype, DType::Undefined) << id;
    EXPECT_FALSE(type_of(g, id).shape_known) << id;
  }
}

TEST(OnnxNodeTypes, OnnxRuntimeTransformerOpsGetTheirTypes) {
  // libonnx has no schema for ONNX Runtime's contrib ops: their types come from
  // engine/io/onnx_contrib_types.cpp, so a rule after the one that made them reads their
  // shapes (the next layer's residual reads output 3 of a SkipSimplifiedLayerNormalization).
  const char* rules_text = R"(
rules:
  - name: make
    pattern: Neg(x)
    rewrite: |
      g = Const() {value = tensor(float32, [8], [1, 1, 1, 1, 1, 1, 1, 1])}
      s, m, i, sum = com.microsoft.SkipSimplifiedLayerNormalization(x, x, g)
      r, ri = SimplifiedLayerNormalization(x, g) {axis = 1}
      f = com.microsoft.FastGelu(x)
      Sum(s, m, i, sum, r, ri, f)
)";
  RuleSet rs = load_rules_from_string(rules_text, "<make>");
  Graph g = parse_graph_text(R"(
input x: float32[2, 4, 8]
n = Neg(x)
output n
)");
  import_onnx_opsets(g);
  rewrite_graph(g, rs);
  auto out_type = [&](const std::string& id, std::uint32_t k) { return g.node(*g.find(id)).outputs[k].type; };
  const std::vector<std::int64_t> full{2, 4, 8}, row{2, 4, 1}, from1{2, 1, 1};
  EXPECT_EQ(out_type("n/s", 0).shape, full);
  EXPECT_EQ(out_type("n/s", 1).shape, row);
  EXPECT_EQ(out_type("n/s", 2).shape, row);
  EXPECT_EQ(out_type("n/s", 3).shape, full);
  EXPECT_EQ(out_type("n/s", 3).dtype, DType::Float32);
  EXPECT_EQ(out_type("n/r", 0).shape, full);
  EXPECT_EQ(out_type("n/r", 1).shape, from1);
  EXPECT_EQ(out_type("n/f", 0).shape, full);
}
