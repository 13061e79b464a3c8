// Raising an ONNX graph's opset for a target (graphfuse/onnx.h raise_onnx_opset, a target
// profile's raise_onnx_opset): raised only where no node changes meaning, and the rules
// guarded by the new opset then apply.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>

#include <onnx/checker.h>

#include "graphfuse/cost.h"
#include "graphfuse/folding.h"
#include "graphfuse/onnx.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/target.h"
#include "onnx_model_builder.h"

using namespace graphfuse;
using graphfuse::testing_onnx::Model;

namespace {

const std::filesystem::path kSrc = GRAPHFUSE_SOURCE_DIR;

void scalar(Model& m, const std::string& name, float v) {
  auto* t = m.g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

// x [2, 4, 8] through the last-axis layer norm torch writes before opset 17 (ReduceMean,
// Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), then Shape and Where, which changed
// only compatibly after 14 (Shape 15: optional start/end; Where 16: more types).
Model decomposed_layer_norm(int opset) {
  Model m(opset);
  m.m.set_ir_version(7);
  m.input("x", {"2", "4", "8"});
  scalar(m, "two", 2.0f);
  scalar(m, "eps", 1e-5f);
  m.floats("gamma", {8});
  m.floats("beta", {8});
  testing_onnx::attr_ints(m.node("ReduceMean", {"x"}, {"mean"}), "axes", {-1});
  m.node("Sub", {"x", "mean"}, {"d"});
  m.node("Pow", {"d", "two"}, {"sq"});
  testing_onnx::attr_ints(m.node("ReduceMean", {"sq"}, {"var"}), "axes", {-1});
  m.node("Add", {"var", "eps"}, {"ve"});
  m.node("Sqrt", {"ve"}, {"std"});
  m.node("Div", {"d", "std"}, {"n"});
  m.node("Mul", {"n", "gamma"}, {"scaled"});
  m.node("Add", {"scaled", "beta"}, {"y"});
  m.node("Shape", {"y"}, {"shape"});
  m.output("y");
  m.output("shape");
  return m;
}

std::int64_t default_opset(const Graph& g) {
  const auto* d = g.properties().get_if<std::vector<std::string>>(onnx_io::kOpsetDomains);
  const auto* v = g.properties().get_if<std::vector<std::int64_t>>(onnx_io::kOpsetVersions);
  for (std::size_t i = 0; d && v && i < d->size(); ++i)
    if ((*d)[i].empty()) return (*v)[i];
  return 0;
}

std::size_t count_op(const Graph& g, std::string_view op) {
  std::size_t n = 0;
  for (NodeId id : g.nodes()) n += g.node(id).op.name() == op;
  return n;
}

}  // namespace

TEST(OnnxOpsetRaise, RaisesWhereNoOpChangesMeaningAndTheModelStaysValid) {
  Graph g = decomposed_layer_norm(14).load();
  const OpsetRaise r = raise_onnx_opset(g, 17);
  EXPECT_EQ(r.from, 14);
  EXPECT_EQ(r.to, 17);
  EXPECT_EQ(r.kept_by, "");
  EXPECT_EQ(default_opset(g), 17);
  onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(write_onnx(g)));
  EXPECT_EQ(written.ir_version(), 8);  // opset 17 came with IR version 8; 7 was asked to carry it
  EXPECT_NO_THROW(onnx::checker::check_model(written));
  // Idempotent, and never lowers: the rewriter prepares the graph before every pass.
  const OpsetRaise again = raise_onnx_opset(g, 17);
  EXPECT_EQ(again.from, 17);
  EXPECT_EQ(again.to, 17);
  EXPECT_EQ(raise_onnx_opset(g, 15).to, 17);
}

TEST(OnnxOpsetRaise, KeepsAGraphWithAnOpWhoseMeaningChanged) {
  // RoiAlign 16 changed the default coordinate mode: the same node computes another thing.
  Model m(15);
  m.input("x", {"1", "3", "8", "8"});
  m.input("rois", {"2", "4"});
  m.input("idx", {"2"}, onnx::TensorProto::INT64);
  m.node("RoiAlign", {"x", "rois", "idx"}, {"pooled"});
  m.output("pooled");
  Graph g = m.load();
  const OpsetRaise r = raise_onnx_opset(g, 17);
  EXPECT_EQ(r.from, 15);
  EXPECT_EQ(r.to, 15);
  EXPECT_NE(r.kept_by.find("RoiAlign changed at opset 16 (node 'pooled')"), std::string::npos) << r.kept_by;
  EXPECT_EQ(default_opset(g), 15);

  // BatchNormalization 14 gave outputs 2 and 3 to training_mode: an inference node (Y
  // alone) means the same, one with the running statistics does not.
  for (int outputs : {1, 3}) {
    Model bn(13);
    bn.input("x", {"1", "4", "8", "8"});
    for (const char* p : {"scale", "bias", "mean", "var"}) bn.floats(p, {4});
    std::vector<std::string> outs = {"y", "running_mean", "running_var"};
    outs.resize(static_cast<std::size_t>(outputs));
    bn.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, outs);
    for (const auto& o : outs) bn.output(o);
    Graph g_bn = bn.load();
    const OpsetRaise r_bn = raise_onnx_opset(g_bn, 17);
    EXPECT_EQ(r_bn.to, outputs == 1 ? 17 : 13) << r_bn.kept_by;
    if (outputs == 3) {
      EXPECT_NE(r_bn.kept_by.find("BatchNormalization changed at opset 14"), std::string::npos) << r_bn.kept_by;
    }
  }

  // The same op inside an If branch keeps the graph too.
  Model outer(15);
  outer.input("c", {}, onnx::TensorProto::BOOL);
  outer.input("x", {"1", "3", "8", "8"});
  outer.input("rois", {"2", "4"});
  outer.input("idx", {"2"}, onnx::TensorProto::INT64);
  auto& iff = outer.node("If", {"c"}, {"y"});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = iff.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto& body = *a->mutable_g();
    body.set_name(branch);
    auto& n = *body.add_node();
    n.set_op_type(std::string(branch) == "then_branch" ? "RoiAlign" : "Identity");
    n.add_input("x");
    if (n.op_type() == "RoiAlign") {
      n.add_input("rois");
      n.add_input("idx");
    }
    n.add_output("out");
    body.add_output()->set_name("out");
  }
  outer.output("y");
  Graph with_if = outer.load();
  const OpsetRaise in_branch = raise_onnx_opset(with_if, 17);
  EXPECT_EQ(in_branch.to, 15);
  EXPECT_NE(in_branch.kept_by.find("RoiAlign changed at opset 16 (in a subgraph of node 'y')"), std::string::npos)
      << in_branch.kept_by;
}

TEST(OnnxOpsetRaise, LeavesGraphsWithoutAnOlderOnnxOpsetAlone) {
  Graph newer = decomposed_layer_norm(17).load();
  EXPECT_EQ(raise_onnx_opset(newer, 15).to, 17);
  Graph plain;  // from another format: imports no ONNX opset
  plain.add_input("x");
  const OpsetRaise r = raise_onnx_opset(plain, 17);
  EXPECT_EQ(r.from, 0);
  EXPECT_FALSE(plain.properties().has(std::string(onnx_io::kOpsetVersions)));
  Graph g = decomposed_layer_norm(14).load();
  const OpsetRaise beyond = raise_onnx_opset(g, 999);
  EXPECT_EQ(beyond.to, 14);
  EXPECT_NE(beyond.kept_by.find("libonnx knows ONNX opsets up to"), std::string::npos) << beyond.kept_by;
}

TEST(OnnxOpsetRaise, TargetRaisesSoOpsetGuardedRulesApply) {
  // rules/onnx emits LayerNormalization only where the graph imports opset 17; ort-cpu
  // raises an opset-14 export there first, so its norm becomes one kernel instead of nine.
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/layernorm.yaml").string()});
  Graph plain = decomposed_layer_norm(14).load();
  rewrite_graph(plain, rules);
  EXPECT_EQ(count_op(plain, "LayerNormalization"), 0u);
  EXPECT_EQ(default_opset(plain), 14);

  Graph g = decomposed_layer_norm(14).load();
  RewriteOptions o;
  o.gate = make_target_gate(std::make_shared<const CostModel>(load_target("ort-cpu")), true);
  const RewriteReport rep = rewrite_graph(g, rules, o);
  EXPECT_EQ(count_op(g, "LayerNormalization"), 1u);
  EXPECT_EQ(count_op(g, "ReduceMean"), 0u);
  EXPECT_EQ(default_opset(g), 17);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_EQ(rep.notes[0], "ONNX opset raised from 14 to 17 for the target (no node changes meaning)");

  // rewrite_and_fold prepares once for all its passes and keeps the line in its report.
  Graph folded = decomposed_layer_norm(14).load();
  const RewriteReport passes = rewrite_and_fold(folded, rules, o, nullptr);
  EXPECT_EQ(passes.notes, rep.notes);
  EXPECT_EQ(count_op(folded, "LayerNormalization"), 1u);

  // explain prepares its copy the same way, says so, and analyses the prepared graph.
  const std::string why = explain_candidate(decomposed_layer_norm(14).load(), rules, "onnx_layernorm_decomposed", "y", o);
  EXPECT_NE(why.find("the target first: ONNX opset raised from 14 to 17"), std::string::npos) << why;
  EXPECT_NE(why.find("prepared graph: match"), std::string::npos) << why;
  EXPECT_NE(why.find("verdict: fires in round 1"), std::string::npos) << why;

  // A profile without the key leaves the opset, and the norm, as they were.
  TargetProfile keep = load_target("ort-cpu");
  keep.raise_onnx_opset = 0;
  Graph kept = decomposed_layer_norm(14).load();
  o.gate = make_target_gate(std::make_shared<const CostModel>(keep), true);
  EXPECT_TRUE(rewrite_graph(kept, rules, o).notes.empty());
  EXPECT_EQ(count_op(kept, "LayerNormalization"), 0u);
  EXPECT_EQ(default_opset(kept), 14);
}

TEST(OnnxOpsetRaise, ProfileKeyIsAWholeVersion) {
  const std::string head = "target: t\nstandard_ops: [\"*\"]\nmachine: {peak_gflops: {float32: 1}, bandwidth_gbs: 1}\n";
  TargetProfile t = load_target_from_string(head + "raise_onnx_opset: 17\n", "t.yaml");
  EXPECT_EQ(t.raise_onnx_opset, 17);
  EXPECT_EQ(load_target_from_string(target_yaml(t), "back.yaml").raise_onnx_opset, 17);
  for (const char* bad : {"raise_onnx_opset: 16.5\n", "raise_onnx_opset: seventeen\n", "raise_onnx_opset: 0\n"}) {
    try {
      load_target_from_string(head + bad, "bad.yaml");
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.yaml:4:19:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("raise_onnx_opset"), std::string::npos) << e.what();
    }
  }
}
