// ONNX shape inference at import: untyped values get ONNX's inferred types, declared types
// stay, and export writes nothing the file did not have.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"
#include "onnx_model_builder.h"

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

namespace {

// x [batch, 3, 19, 19] -> Conv (pads 1, stride 2) -> MaxPool (3x3, stride 2, ceil_mode) ->
// AveragePool (2x2, pads 1) -> MaxPool (dilations 2) -> Pad (3 before, 1 after in H, -1 in
// W) -> GlobalAveragePool -> Reshape by a Constant node's value_ints -> Gemm: the pooling,
// padding and Constant forms the symbolic pass must type as libonnx does.
onnx::ModelProto pooling_model(const std::string& batch) {
  testing_onnx::Model m(13);
  m.input("x", {batch, "3", "19", "19"});
  m.floats("w", {8, 3, 3, 3});
  m.floats("gw", {4, 8});
  auto& conv = m.node("Conv", {"x", "w"}, {"c"});
  testing_onnx::attr_ints(conv, "pads", {1, 1, 1, 1});
  testing_onnx::attr_ints(conv, "strides", {2, 2});
  auto& mp = m.node("MaxPool", {"c"}, {"p1"});
  testing_onnx::attr_ints(mp, "kernel_shape", {3, 3});
  testing_onnx::attr_ints(mp, "strides", {2, 2});
  testing_onnx::attr_int(mp, "ceil_mode", 1);
  auto& ap = m.node("AveragePool", {"p1"}, {"p2"});
  testing_onnx::attr_ints(ap, "kernel_shape", {2, 2});
  testing_onnx::attr_ints(ap, "pads", {1, 1, 1, 1});
  auto& dp = m.node("MaxPool", {"p2"}, {"p3"});
  testing_onnx::attr_ints(dp, "kernel_shape", {2, 2});
  testing_onnx::attr_ints(dp, "dilations", {2, 2});
  m.ints("pads", {0, 0, 1, 0, 0, 0, 2, -1});
  m.node("Pad", {"p3", "pads"}, {"padded"});
  m.node("GlobalAveragePool", {"padded"}, {"gap"});
  testing_onnx::attr_ints(m.node("Constant", {}, {"shape"}), "value_ints", {-1, 8});
  m.node("Reshape", {"gap", "shape"}, {"flat"});
  testing_onnx::attr_int(m.node("Gemm", {"flat", "gw"}, {"y"}), "transB", 1);
  m.output("y", {batch, "4"});
  return m.m;
}

// The repository's ONNX files, ../shared/models, and the folders GRAPHFUSE_EXTRA_ONNX_DIRS
// names (colon-separated: the zoo bench/zoo/export_zoo.py writes, for a run by hand).
std::vector<fs::path> models_at_hand() {
  std::vector<fs::path> out;
  const fs::path src(GRAPHFUSE_SOURCE_DIR);
  std::vector<fs::path> dirs{src / ".." / "shared" / "models", src / "tests" / "rules" / "models", src / "examples"};
  if (const char* extra = std::getenv("GRAPHFUSE_EXTRA_ONNX_DIRS")) {
    std::string list = extra;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t end = std::min(list.find(':', at), list.size());
      if (end > at) dirs.emplace_back(list.substr(at, end - at));
      at = end + 1;
    }
  }
  for (const fs::path& dir : dirs) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".onnx") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every value libonnx's whole-model inference types gets the same type from an import that
// left it to graphfuse's own pass; returns how many values were compared.
int expect_same_types_as_libonnx(const onnx::ModelProto& model, const std::string& label) {
  onnx::ModelProto for_libonnx = model, for_import = model;
  const std::vector<onnx_io::InferredType> expected = onnx_io::infer_value_types(for_libonnx);
  Graph g = onnx_io::graph_from_model(for_import, label, "");
  std::unordered_map<std::string, ValueRef> values;
  for (NodeId id : g.nodes())
    for (std::size_t k = 0; k < g.node(id).outputs.size(); ++k) {
      const ValueRef v{id, static_cast<std::uint32_t>(k)};
      values.emplace(g.value_name(v), v);
    }
  int compared = 0;
  for (const auto& [name, proto] : expected) {
    ValueType want;
    if (!onnx_io::value_type_from_proto(proto, want)) continue;
    auto it = values.find(name);
    if (it == values.end()) continue;
    const ValueType& got = g.node(it->second.node).outputs[it->second.port].type;
    // What libonnx knows, the pass must know alike; where libonnx gives up (a Reshape whose
    // shape is a Constant node's value_ints, a dim it names unk__N), the pass may know more.
    if (want.dtype != DType::Undefined) {
      EXPECT_EQ(got.dtype, want.dtype) << label << ": " << name;
    }
    if (want.shape_known) {
      EXPECT_TRUE(got.shape_known) << label << ": " << name;
      EXPECT_EQ(got.shape.size(), want.shape.size()) << label << ": " << name;
      for (std::size_t i = 0; i < want.shape.size() && i < got.shape.size(); ++i) {
        const std::string param = i < want.dim_params.size() ? want.dim_params[i] : "";
        if (want.shape[i] >= 0) {
          EXPECT_EQ(got.shape[i], want.shape[i]) << label << ": " << name << " dim " << i;
        } else if (!param.empty() && !param.starts_with("unk__")) {
          EXPECT_EQ(i < got.dim_params.size() ? got.dim_params[i] : "", param) << label << ": " << name << " dim " << i;
        }
      }
    }
    ++compared;
  }
  return compared;
}

}  // namespace

// Import skips libonnx (and building its schema registry) only for models whose every op
// graphfuse's symbolic pass types in full; on those it must give the types libonnx gives.
// Checked on built pooling models (fixed and symbolic batch) and on every ONNX model in
// the repository and ../shared/models that qualifies.
TEST(OnnxShapes, OwnInferenceGivesLibonnxTypesWhereItSuffices) {
  for (const std::string batch : {"2", "N"}) {
    onnx::ModelProto m = pooling_model(batch);
    ASSERT_TRUE(onnx_io::own_inference_suffices(m)) << batch;
    EXPECT_EQ(expect_same_types_as_libonnx(m, "pools/" + batch), 8) << batch;
    Graph g = onnx_io::graph_from_model(m, "pools", "");
    EXPECT_EQ(type_of(g, "p1").shape, (std::vector<std::int64_t>{batch == "N" ? -1 : 2, 8, 5, 5}));
  }
  int qualifying = 0;
  for (const fs::path& path : models_at_hand()) {
    onnx::ModelProto m = onnx_io::read_model_proto(path.string());
    if (!onnx_io::own_inference_suffices(m)) continue;
    ++qualifying;
    EXPECT_GT(expect_same_types_as_libonnx(m, path.string()), 0) << path;
  }
  RecordProperty("qualifying_models", qualifying);
}

// What the symbolic pass does not cover keeps libonnx's inference: another domain's op,
// auto_pad, an untyped graph input, an input count the op does not allow, an op not listed.
TEST(OnnxShapes, OwnInferenceIsNotUsedBeyondWhatItCovers) {
  onnx::ModelProto m = pooling_model("N");
  EXPECT_TRUE(onnx_io::own_inference_suffices(m));
  onnx::ModelProto other = m;
  other.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
  EXPECT_FALSE(onnx_io::own_inference_suffices(other));
  onnx::ModelProto same = m;
  auto* a = same.mutable_graph()->mutable_node(1)->add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("SAME_UPPER");
  EXPECT_FALSE(onnx_io::own_inference_suffices(same));
  onnx::ModelProto untyped = m;
  untyped.mutable_graph()->mutable_input(0)->clear_type();
  EXPECT_FALSE(onnx_io::own_inference_suffices(untyped));
  onnx::ModelProto two_inputs = m;  // Relu(x, x): libonnx rejects it, the pass would not see it
  two_inputs.mutable_graph()->mutable_node(7)->set_op_type("Relu");
  EXPECT_FALSE(onnx_io::own_inference_suffices(two_inputs));
  onnx::ModelProto lstm = m;
  lstm.mutable_graph()->mutable_node(2)->set_op_type("LSTM");
  EXPECT_FALSE(onnx_io::own_inference_suffices(lstm));
}

// Window numbers a file made up (pads and kernels near INT64_MAX, a zero stride, negative
// dilations) leave the dims unknown instead of overflowing; the import still succeeds.
TEST(OnnxShapes, WindowSizesFromAFileNeverOverflow) {
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  onnx::ModelProto m = pooling_model("2");
  auto& g = *m.mutable_graph();
  for (int i : {0, 1, 2, 3}) g.mutable_node(i)->clear_attribute();
  testing_onnx::attr_ints(*g.mutable_node(0), "pads", {huge, huge, huge, huge});
  testing_onnx::attr_ints(*g.mutable_node(1), "kernel_shape", {huge, 3});
  testing_onnx::attr_ints(*g.mutable_node(1), "strides", {0, huge});
  testing_onnx::attr_ints(*g.mutable_node(2), "kernel_shape", {2, 2});
  testing_onnx::attr_ints(*g.mutable_node(2), "pads", {-huge, 1, huge, 1});
  testing_onnx::attr_ints(*g.mutable_node(3), "kernel_shape", {2, 2});
  testing_onnx::attr_ints(*g.mutable_node(3), "dilations", {-huge, huge});
  Graph imported = onnx_io::graph_from_model(m, "<hostile>", "");
  for (const char* id : {"c", "p1", "p2", "p3"}) {
    const ValueType& t = type_of(imported, id);
    if (!t.shape_known) continue;
    ASSERT_EQ(t.shape.size(), 4u) << id;
    EXPECT_EQ(t.shape[2], -1) << id;
  }
}
