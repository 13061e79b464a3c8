// Symbolic shapes (docs/shapes.md): the canonical form of symbolic dims, the import pass on
// hand-built dynamic-axis graphs where libonnx's inference loses the rank, the per-node
// pass for created com.microsoft nodes, and rule conditions deciding on symbols.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/type_inference.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"
#include "onnx_model_builder.h"
#include "shape/sym_dim.h"

using namespace graphfuse;
using shape::SymDim;
using namespace graphfuse::testing_onnx;
namespace fs = std::filesystem;

TEST(SymDim, CanonicalFormsCompareEqual) {
  EXPECT_EQ(SymDim::parse("seq+past"), SymDim::parse("past + seq"));
  EXPECT_EQ(SymDim::parse("seq+past").text(), "past + seq");
  EXPECT_EQ(SymDim::parse("seq*64").text(), "64*seq");
  EXPECT_EQ(SymDim::parse("(a + 1)*(a - 1)").text(), "a*a - 1");
  EXPECT_EQ(SymDim::parse("batch*seq*4*16").text(), "64*batch*seq");
  EXPECT_EQ(SymDim::parse("seq - seq + 3"), SymDim::number(3));
  EXPECT_TRUE(SymDim::parse("seq - seq + 3").is_number());
  EXPECT_EQ(SymDim::parse("-seq + 4").text(), "-seq + 4");
  // Texts parse back to what they came from.
  for (const char* t : {"2*batch*seq + past - 1", "-3*a*b", "x_1 + y"})
    EXPECT_EQ(SymDim::parse(SymDim::parse(t).text()), SymDim::parse(t)) << t;
  // Free-text names (ONNX dim_params are any text) are opaque symbols: equal to
  // themselves, never combined.
  SymDim odd = SymDim::parse("batch size");
  EXPECT_FALSE(odd.combinable());
  EXPECT_EQ(odd.text(), "batch size");
  EXPECT_FALSE(add(odd, SymDim::number(1)));
  EXPECT_FALSE(SymDim::parse("2seq").combinable());
}

TEST(SymDim, ArithmeticAndExactDivision) {
  SymDim b = SymDim::symbol("batch"), s = SymDim::symbol("seq");
  auto bs = mul(b, s);
  ASSERT_TRUE(bs);
  auto total = mul(*bs, SymDim::number(64));
  ASSERT_TRUE(total);
  auto q = div_exact(*total, *mul(s, SymDim::number(4)));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->text(), "16*batch");
  EXPECT_FALSE(div_exact(*total, SymDim::symbol("past")));  // not a factor
  EXPECT_FALSE(div_exact(*total, SymDim::number(128)));     // 64 is not divisible by 128
  EXPECT_FALSE(div_exact(*add(s, SymDim::number(1)), SymDim::number(2)));
  EXPECT_EQ(difference(*add(s, SymDim::number(3)), s), 3);
  EXPECT_FALSE(difference(s, b));
  EXPECT_FALSE(mul(SymDim::number(INT64_MAX), SymDim::number(2)));  // overflow: unknown
}

namespace {

// "[batch, seq, 4, 16]" for a value's type; "?" for an unknown dim, "unranked" for an
// unknown rank.
std::string shape_text(const Graph& g, const std::string& id) {
  auto n = g.find(id);
  if (!n) return "no node " + id;
  const ValueType& t = g.node(*n).outputs[0].type;
  if (!t.shape_known) return "unranked";
  std::string s = "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ", ";
    if (t.shape[i] >= 0) s += std::to_string(t.shape[i]);
    else if (i < t.dim_params.size() && !t.dim_params[i].empty()) s += t.dim_params[i];
    else s += "?";
  }
  return s + "]";
}

// The head split of an exported attention block: Reshape(q, Concat(Shape(q)[0],
// Shape(q)[1], 4, 16)), then the merge back with a -1, and a Slice of a position buffer
// to the run-time sequence length.
Model attention_chain() {
  Model md;
  md.input("x", {"batch", "seq", "64"});
  md.ints("i0", {0}, true);
  md.ints("i1", {1}, true);
  md.ints("ax0", {0});
  md.ints("heads", {4, 16});
  md.ints("merge", {0, 0, -1});
  md.node("Shape", {"x"}, {"shp"});
  md.node("Gather", {"shp", "i0"}, {"b"});
  md.node("Gather", {"shp", "i1"}, {"s"});
  md.node("Unsqueeze", {"b", "ax0"}, {"b1"});
  md.node("Unsqueeze", {"s", "ax0"}, {"s1"});
  attr_int(md.node("Concat", {"b1", "s1", "heads"}, {"target"}), "axis", 0);
  md.node("Reshape", {"x", "target"}, {"split"});
  attr_ints(md.node("Transpose", {"split"}, {"qt"}), "perm", {0, 2, 1, 3});
  md.node("MatMul", {"qt", "qt_t"}, {"scores"});
  attr_ints(md.node("Transpose", {"split"}, {"qt_t"}), "perm", {0, 2, 3, 1});
  attr_int(md.node("Softmax", {"scores"}, {"probs"}), "axis", -1);
  md.node("MatMul", {"probs", "qt"}, {"ctx"});
  attr_ints(md.node("Transpose", {"ctx"}, {"ctx_t"}), "perm", {0, 2, 1, 3});
  md.node("Reshape", {"ctx_t", "merge"}, {"merged"});
  // pos [1, 128, 64] sliced to [1, seq, 64] and added: broadcast against [batch, seq, 64].
  md.floats("pos", {1, 128, 64});
  md.node("Slice", {"pos", "i0_1", "s1", "ax1"}, {"pos_s"});
  md.ints("i0_1", {0});
  md.ints("ax1", {1});
  md.node("Add", {"merged", "pos_s"}, {"sum"});
  md.floats("gamma", {64});
  md.floats("beta", {64});
  attr_int(md.node("LayerNormalization", {"sum", "gamma", "beta"}, {"ln"}), "axis", -1);
  md.node("Relu", {"ln"}, {"y"});
  md.output("y");
  return md;
}

}  // namespace

TEST(SymbolicShapes, ReshapeAndSliceChainsKeepTheirSymbols) {
  Model md = attention_chain();
  Graph g = md.load();
  EXPECT_EQ(shape_text(g, "shp"), "[3]");
  EXPECT_EQ(shape_text(g, "target"), "[4]");
  EXPECT_EQ(shape_text(g, "split"), "[batch, seq, 4, 16]");
  EXPECT_EQ(shape_text(g, "qt"), "[batch, 4, seq, 16]");
  EXPECT_EQ(shape_text(g, "scores"), "[batch, 4, seq, seq]");
  EXPECT_EQ(shape_text(g, "ctx"), "[batch, 4, seq, 16]");
  EXPECT_EQ(shape_text(g, "merged"), "[batch, seq, 64]");  // -1 = batch*seq*64 / (batch*seq)
  EXPECT_EQ(shape_text(g, "pos_s"), "[1, seq, 64]");
  EXPECT_EQ(shape_text(g, "sum"), "[batch, seq, 64]");
  EXPECT_EQ(shape_text(g, "ln"), "[batch, seq, 64]");
  // A graph output the file declares without a type keeps its declaration (export writes it).
  EXPECT_EQ(shape_text(g, "y"), "unranked");
  // The pass's values are listed as inferred, so export writes no value_info for them.
  const auto* names = g.properties().get_if<std::vector<std::string>>(onnx_io::kInferredValues);
  ASSERT_NE(names, nullptr);
  EXPECT_NE(std::find(names->begin(), names->end(), "merged"), names->end());
  onnx::ModelProto back = onnx_io::model_from_graph(g);
  EXPECT_EQ(back.graph().value_info_size(), 0);
}

TEST(SymbolicShapes, ArithmeticOnShapeValues) {
  // GPT-2's causal mask: bias[:, :, k - q : k, :k] with k = q = seq from Shape.
  Model md;
  md.input("x", {"batch", "seq", "8"});
  md.floats("bias", {1, 1, 32, 32});
  md.ints("i1", {1}, true);
  md.ints("ax0", {0});
  md.ints("axes", {2});
  md.ints("axes3", {3});
  md.ints("zero", {0});
  md.node("Shape", {"x"}, {"shp"});
  md.node("Gather", {"shp", "i1"}, {"q"});
  md.node("Gather", {"shp", "i1"}, {"k"});
  md.node("Sub", {"k", "q"}, {"start"});
  md.node("Unsqueeze", {"start", "ax0"}, {"start1"});
  md.node("Unsqueeze", {"k", "ax0"}, {"k1"});
  md.node("Slice", {"bias", "start1", "k1", "axes"}, {"rows"});
  md.node("Slice", {"rows", "zero", "k1", "axes3"}, {"mask"});
  // A Range to the sequence length, and ConstantOfShape / Expand from computed shapes.
  md.ints("zero_s", {0}, true);
  md.ints("one_s", {1}, true);
  md.node("Range", {"zero_s", "q", "one_s"}, {"positions"});
  md.node("Concat", {"k1", "k1"}, {"sq"});
  attr_int(md.g.mutable_node(md.g.node_size() - 1)[0], "axis", 0);
  md.node("ConstantOfShape", {"sq"}, {"zeros"});
  md.node("Expand", {"mask", "sq"}, {"expanded"});
  // torch's expand idiom: Where(Equal(shape, -1), 1, shape); a dim is never -1.
  md.ints("minus", {-1, -1});
  md.ints("ones", {1, 1});
  md.node("Equal", {"sq", "minus"}, {"is_minus"});
  md.node("Where", {"is_minus", "ones", "sq"}, {"target"});
  md.node("Expand", {"mask", "target"}, {"expanded2"});
  md.node("Mul", {"k", "one_s"}, {"k_times"});
  md.node("Concat", {"k1", "k_times1"}, {"all"});
  attr_int(md.g.mutable_node(md.g.node_size() - 1)[0], "axis", 0);
  md.node("Unsqueeze", {"k_times", "ax0"}, {"k_times1"});
  md.output("all");
  Graph g = md.load();
  EXPECT_EQ(shape_text(g, "mask"), "[1, 1, seq, seq]");
  EXPECT_EQ(shape_text(g, "positions"), "[seq]");
  EXPECT_EQ(shape_text(g, "zeros"), "[seq, seq]");
  EXPECT_EQ(shape_text(g, "expanded"), "[1, 1, seq, seq]");
  EXPECT_EQ(shape_text(g, "expanded2"), "[1, 1, seq, seq]");
  EXPECT_EQ(shape_text(g, "k_times"), "[]");
}

TEST(SymbolicShapes, UnknownStaysUnknown) {
  // A Reshape to a shape read from another graph input is not known; a Slice to a
  // number bound on a symbolic axis is min(seq, 4): not known either.
  Model md;
  md.input("x", {"batch", "seq", "8"});
  md.input("target", {"3"}, onnx::TensorProto::INT64);
  md.ints("zero", {0});
  md.ints("four", {4});
  md.ints("ax1", {1});
  md.node("Reshape", {"x", "target"}, {"r"});
  md.node("Slice", {"x", "zero", "four", "ax1"}, {"s"});
  md.node("Concat", {"r", "s"}, {"all"});
  attr_int(md.g.mutable_node(md.g.node_size() - 1)[0], "axis", 0);
  md.output("all");
  Graph g = md.load();
  EXPECT_EQ(shape_text(g, "r"), "[?, ?, ?]");  // the rank comes from the shape's length
  // libonnx names the dim it could not follow with a fresh symbol (unk__N), equal to no other.
  const std::string s = shape_text(g, "s");
  EXPECT_TRUE(s == "[batch, ?, 8]" || s.starts_with("[batch, unk__")) << s;
}

TEST(SymbolicShapes, CreatedMicrosoftNodesGetTypes) {
  Model md = attention_chain();
  Graph g = md.load();
  auto inference = type_inference_for(g);
  ASSERT_TRUE(inference);
  NodeId sum = *g.find("sum"), gamma = *g.find("gamma"), beta = *g.find("beta");
  NodeId skip = g.add_node("skip_ln", OpType::intern("com.microsoft.SkipLayerNormalization"),
                           {ValueRef{sum, 0}, ValueRef{sum, 0}, ValueRef{gamma, 0}, ValueRef{beta, 0}});
  inference->infer(g, skip);
  EXPECT_EQ(shape_text(g, "skip_ln"), "[batch, seq, 64]");
  EXPECT_EQ(g.node(skip).outputs[0].type.dtype, DType::Float32);
}

namespace {

// Whether rule `cond` rewrites Add(a, b) to Sub(a, b) in a graph whose inputs have types
// `ta` and `tb` (.graph type text).
bool fires(const std::string& cond, const std::string& ta, const std::string& tb) {
  RuleSet rs = load_rules_from_string("rules:\n  - name: r\n    pattern: Add(a, b)\n    where: |\n      " + cond +
                                         "\n    rewrite: Sub(a, b)\n",
                                     "<cond>");
  Graph g = parse_graph_text("input a: " + ta + "\ninput b: " + tb + "\ns = Add(a, b)\noutput s\n");
  rewrite_graph(g, rs);
  return g.node(*g.find("s")).op.name() == "Sub";
}

}  // namespace

TEST(SymbolicShapes, ConditionsDecideOnSymbols) {
  // Equal symbols are equal dims; different symbols are unknown, so neither == nor !=
  // holds; a symbol and the same symbol plus a number differ by that number.
  EXPECT_TRUE(fires("dim(a, -1) == dim(b, 0)", "float32[batch, seq]", "float32[seq]"));
  EXPECT_FALSE(fires("dim(a, -1) == dim(b, 0)", "float32[batch, seq]", "float32[past]"));
  EXPECT_FALSE(fires("dim(a, -1) != dim(b, 0)", "float32[batch, seq]", "float32[past]"));
  EXPECT_FALSE(fires("!(dim(a, -1) == dim(b, 0))", "float32[batch, seq]", "float32[past]"));
  EXPECT_TRUE(fires("dim(a, -1) != dim(b, 0)", "float32[batch, seq]", "float32[`seq + 1`]"));
  EXPECT_TRUE(fires("dim(b, 0) > dim(a, 1)", "float32[batch, seq]", "float32[`seq + 1`]"));
  EXPECT_TRUE(fires("dim(a, 0) == dim(b, 0)", "float32[`seq+past`]", "float32[`past + seq`]"));
  // A symbol against a number is unknown either way (seq may be 64).
  EXPECT_FALSE(fires("dim(a, -1) == 64", "float32[batch, seq]", "float32[seq]"));
  EXPECT_FALSE(fires("dim(a, -1) != 64", "float32[batch, seq]", "float32[seq]"));
  // Numbers compare as before.
  EXPECT_TRUE(fires("dim(a, -1) == dim(b, 0)", "float32[2, 64]", "float32[64]"));
  // same_shape compares canonical forms: `seq+past` written one way or the other.
  EXPECT_TRUE(fires("same_shape(a, b)", "float32[batch, `seq+past`]", "float32[batch, `past + seq`]"));
  EXPECT_FALSE(fires("same_shape(a, b)", "float32[batch, seq]", "float32[batch, past]"));
  EXPECT_TRUE(fires("rank(a) == 2", "float32[batch, `64*seq`]", "float32[1]"));
}

TEST(SymbolicShapes, ExpressionDimsRoundTripThroughTextFormats) {
  const std::string text =
      "input x: float32[batch, `past + seq`, 64]\n"
      "r = Relu(x): float32[batch, `past + seq`, 64]\n"
      "s = Const() {value = tensor(int64, [1], [-1])}\n"
      "m = Reshape(r, s): float32[`64*batch*past + 64*batch*seq`]\n"
      "output m\n";
  Graph g = parse_graph_text(text);
  EXPECT_EQ(write_graph_text(g), text);
  EXPECT_EQ(write_graph_text(parse_graph_yaml(write_graph_yaml(g))), text);
  EXPECT_EQ(write_graph_text(parse_graph_yaml(write_graph_json(g))), text);
  EXPECT_EQ(write_graph_text(parse_graph_binary(write_graph_binary(g))), text);
}

// A torch export with dynamic batch and sequence axes (tests/data/symbolic/make_bert.py):
// libonnx's inference loses the rank at the first Reshape whose shape is computed from
// Shape(x), so the shape-guarded layer-norm rules saw nothing to check. With the symbolic
// pass every value is ranked and the residual + layer norm pairs fuse as in a fixed export.
TEST(SymbolicShapes, DynamicBertExportFusesItsLayerNorms) {
  const fs::path src(GRAPHFUSE_SOURCE_DIR);
  Graph g = load_onnx((src / "tests/data/symbolic/bert_dynamic.onnx").string());
  std::size_t values = 0, ranked = 0;
  for (NodeId n : g.nodes()) {
    const Node& nd = g.node(n);
    if (nd.op.name() == "Const" || nd.op.name() == "Constant" || nd.op.name() == "Input") continue;
    for (const OutputInfo& o : nd.outputs) {
      ++values;
      ranked += o.type.shape_known ? 1 : 0;
    }
  }
  // All but the graph output, which the file declares with its own names.
  EXPECT_GE(ranked + 1, values);
  for (NodeId n : g.nodes()) {
    if (g.node(n).op.name() == "Reshape" && g.node(n).outputs[0].type.shape.size() == 4) {
      EXPECT_EQ(g.node(n).outputs[0].type.dim_params, (std::vector<std::string>{"batch", "seq", "", ""}));
    }
  }
  RuleSet rules = load_rule_files({(src / "rules/onnx").string()});
  rewrite_graph(g, rules);
  std::size_t skip = 0;
  for (NodeId n : g.nodes()) skip += g.node(n).op.name() == "com.microsoft.SkipLayerNormalization" ? 1 : 0;
  // Two blocks, two residual norms each, and the embedding norm: word embeddings plus the
  // position term Gather(pos, 0..seq-1) of shape [1, seq, H], a skip broadcast over the batch.
  EXPECT_EQ(skip, 5u);
}

// A rule's com.microsoft output feeding Shape in a dynamic-axis graph (FusedMatMul from
// onnx_matmul_div_out in an attention block): libonnx 1.12's data propagation crashed on
// the Shape of the untyped value; the model imports, and the symbolic pass types the chain.
TEST(SymbolicShapes, ShapeOfAMicrosoftOpOutputImports) {
  Model md(17);
  auto* ms = md.m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  md.input("x", {"batch", "seq", "8"});
  md.floats("w", {8, 8});
  md.ints("i1", {1}, true);
  md.ints("ax0", {0});
  md.ints("tail", {2, 4});
  md.node("FusedMatMul", {"x", "w"}, {"mm"}, "com.microsoft");
  md.node("Shape", {"mm"}, {"shp"});
  md.node("Gather", {"shp", "i1"}, {"s"});
  md.node("Unsqueeze", {"s", "ax0"}, {"s1"});
  md.ints("minus", {-1});
  attr_int(md.node("Concat", {"minus", "s1", "tail"}, {"target"}), "axis", 0);
  md.node("Reshape", {"mm", "target"}, {"r"});
  md.node("Relu", {"r"}, {"y"});
  md.output("y");
  Graph g = md.load();
  EXPECT_EQ(shape_text(g, "mm"), "[batch, seq, 8]");
  EXPECT_EQ(shape_text(g, "r"), "[batch, seq, 2, 4]");
}
