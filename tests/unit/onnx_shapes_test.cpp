// ONNX shape inference at import: untyped values get ONNX's inferred types, declared types
// stay, and export writes nothing the file did not have.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

void set_type(onnx::ValueInfoProto& vi, const std::string& name, std::vector<std::string> dims) {
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
}

onnx::NodeProto& add_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                          const std::string& out, const std::string& domain = "") {
  auto& n = *g.add_node();
  n.set_op_type(op);
  n.set_domain(domain);
  for (const auto& i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

// x [N, 3] -> Relu r -> Add(r, bias [3]) s -> com.microsoft.Gelu g -> Relu y; only x and y
// are typed in the file, plus `d` (value_info) declared [N, 3] on a Relu of s.
onnx::ModelProto model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto& g = *m.mutable_graph();
  g.set_name("shapes");
  set_type(*g.add_input(), "x", {"N", "3"});
  auto* b = g.add_initializer();
  b->set_name("bias");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(3);
  for (float f : {1.f, 2.f, 3.f}) b->add_float_data(f);
  add_node(g, "Relu", {"x"}, "r");
  add_node(g, "Add", {"r", "bias"}, "s");
  add_node(g, "Relu", {"s"}, "d");
  add_node(g, "Gelu", {"d"}, "gl", "com.microsoft");
  add_node(g, "Relu", {"gl"}, "y");
  set_type(*g.add_value_info(), "d", {"M", "3"});  // declared: kept, even where inference knows better
  set_type(*g.add_output(), "y", {"N", "3"});
  return m;
}

const ValueType& type_of(const Graph& g, const std::string& id) { return g.node(*g.find(id)).outputs[0].type; }

}  // namespace

TEST(OnnxShapes, UntypedValuesGetInferredTypesDeclaredOnesStay) {
  onnx::ModelProto m = model();
  Graph g = onnx_io::graph_from_model(m, "<test>", "");
  const ValueType& r = type_of(g, "r");
  EXPECT_EQ(r.dtype, DType::Float32);
  ASSERT_TRUE(r.shape_known);
  EXPECT_EQ(r.shape, (std::vector<std::int64_t>{-1, 3}));
  EXPECT_EQ(r.dim_params, (std::vector<std::string>{"N", ""}));  // the symbol travels
  EXPECT_EQ(type_of(g, "s").shape, (std::vector<std::int64_t>{-1, 3}));
  EXPECT_EQ(type_of(g, "d").dim_params, (std::vector<std::string>{"M", ""}));  // the file's
  // libonnx has no schema for com.microsoft.Gelu; graphfuse's own pass (docs/shapes.md)
  // types it like its input, the file's declared `d`.
  EXPECT_EQ(type_of(g, "gl").dtype, DType::Float32);
  EXPECT_EQ(type_of(g, "gl").dim_params, (std::vector<std::string>{"M", ""}));
  const auto* names = g.properties().get_if<std::vector<std::string>>(onnx_io::kInferredValues);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(*names, (std::vector<std::string>{"r", "s", "gl"}));
}

TEST(OnnxShapes, ExportWritesNoInferredValueInfo) {
  onnx::ModelProto m = model();
  Graph g = onnx_io::graph_from_model(m, "<test>", "");
  onnx::ModelProto back = onnx_io::model_from_graph(g);
  ASSERT_EQ(back.graph().value_info_size(), 1);  // the file's own entry only
  EXPECT_EQ(back.graph().value_info(0).name(), "d");
  // Imported again, the same types are inferred again.
  Graph again = onnx_io::graph_from_model(back, "<test>", "");
  EXPECT_EQ(type_of(again, "s"), type_of(g, "s"));
  const auto* names = again.properties().get_if<std::vector<std::string>>(onnx_io::kInferredValues);
  ASSERT_NE(names, nullptr);
  EXPECT_EQ(*names, (std::vector<std::string>{"r", "s", "gl"}));
}

TEST(OnnxShapes, InferenceLeavesTheModelAsItWas) {
  onnx::ModelProto m = model();
  // A subgraph body, which inference annotates in place, must come back unchanged too.
  auto& iff = add_node(*m.mutable_graph(), "If", {"cond"}, "branch");
  set_type(*m.mutable_graph()->add_input(), "cond", {});
  m.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  for (const char* name : {"then_branch", "else_branch"}) {
    auto* a = iff.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* body = a->mutable_g();
    body->set_name(name);
    add_node(*body, "Relu", {"x"}, std::string(name) + "_r");
    add_node(*body, "Neg", {std::string(name) + "_r"}, std::string(name) + "_out");
    auto* o = body->add_output();
    o->set_name(std::string(name) + "_out");
  }
  const std::string before = m.SerializeAsString();
  auto inferred = onnx_io::infer_value_types(m);
  EXPECT_EQ(m.SerializeAsString(), before);
  auto has = [&](const std::string& n) {
    return std::any_of(inferred.begin(), inferred.end(), [&](const auto& p) { return p.first == n; });
  };
  EXPECT_TRUE(has("r"));
  EXPECT_TRUE(has("branch"));
  EXPECT_FALSE(has("d"));  // declared
  EXPECT_FALSE(has("y"));  // a typed graph output
}

// Every decomposed layer norm of the transformer (ReduceMean's input) and every residual
// Add's operands have a known shape after import: what the layer-norm rules check.
TEST(OnnxShapes, SharedTransformerValuesAreTyped) {
  const fs::path model = fs::path(GRAPHFUSE_SOURCE_DIR) / ".." / "shared" / "models" / "transformer_encoder.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent";
  Graph g = load_onnx(model.string());
  int reduce_means = 0;
  for (NodeId n : g.nodes()) {
    const Node& nd = g.node(n);
    if (nd.op.name() != "ReduceMean") continue;
    ++reduce_means;
    const Node& src = g.node(nd.inputs[0].node);
    const ValueType& t = src.outputs[nd.inputs[0].port].type;
    EXPECT_TRUE(t.shape_known) << "input of " << nd.id;
    EXPECT_EQ(t.shape.size(), 3u) << "input of " << nd.id;
  }
  EXPECT_EQ(reduce_means, 16);
}

// A model libonnx's inference rejects (a declared output type contradicting its op) still
// imports; libonnx infers nothing and the property says why. graphfuse's own pass, which
// does not check declared types against ops, still types what it can.
TEST(OnnxShapes, InferenceFailureIsNotAnImportError) {
  onnx::ModelProto m = model();
  m.mutable_graph()->mutable_value_info(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);  // d = Relu(s): float
  Graph g = onnx_io::graph_from_model(m, "<test>", "");
  EXPECT_EQ(type_of(g, "r").dim_params, (std::vector<std::string>{"N", ""}));
  const auto* why = g.properties().get_if<std::string>(onnx_io::kInferenceError);
  ASSERT_NE(why, nullptr);
  EXPECT_FALSE(why->empty());
}
