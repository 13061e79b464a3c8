// Target profiles (targets/*.yaml), kernel availability, the roofline cost model, the
// rewrite gate in the driver, and `check --target`'s static analysis.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "graphfuse/cost.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/target.h"
#include "cli_helpers.h"
#include "target/rule_check.h"

using namespace graphfuse;
using testutil::CliRun, testutil::run_cli, testutil::src;
namespace fs = std::filesystem;

namespace {

const fs::path kSrc = GRAPHFUSE_SOURCE_DIR;

ValueType f32(std::vector<std::int64_t> s) { return ValueType{DType::Float32, std::move(s), true, {}}; }

NodeId constant(Graph& g, const std::string& id, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  Attributes a;
  a.set("value", Tensor::from_floats(shape, std::vector<float>(static_cast<std::size_t>(n), 0.5f)));
  NodeId c = g.add_node(id, OpType::intern("Const"), {}, std::move(a));
  g.output_infos(c)[0].type = f32(shape);
  return c;
}

// x -> Conv(c_in -> c_out, 3x3, pad 1) -> act, with every value's type set (as ONNX import
// leaves them). `act_op` empty: no activation. Returns the graph; its output is the last node.
Graph conv_act(std::int64_t c_in, std::int64_t c_out, std::int64_t hw, const std::string& act_op,
               std::vector<NodeId>* extra_use = nullptr) {
  Graph g;
  NodeId x = g.add_input("x", f32({1, c_in, hw, hw}));
  NodeId w = constant(g, "w", {c_out, c_in, 3, 3});
  NodeId b = constant(g, "b", {c_out});
  Attributes a;
  a.set("kernel_shape", std::vector<std::int64_t>{3, 3});
  a.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
  NodeId conv = g.add_node("conv", OpType::intern("Conv"), {{x, 0}, {w, 0}, {b, 0}}, std::move(a));
  g.output_infos(conv)[0].type = f32({1, c_out, hw, hw});
  NodeId last = conv;
  if (act_op == "Clip") {
    NodeId lo = constant(g, "lo", {});
    NodeId hi = constant(g, "hi", {});
    last = g.add_node("act", OpType::intern("Clip"), {{conv, 0}, {lo, 0}, {hi, 0}});
  } else if (!act_op.empty()) {
    last = g.add_node("act", OpType::intern(act_op), {{conv, 0}});
  }
  g.output_infos(last)[0].type = f32({1, c_out, hw, hw});
  g.add_output({last, 0});
  if (extra_use) extra_use->push_back(conv);
  return g;
}

std::size_t count_op(const Graph& g, std::string_view op) {
  std::size_t n = 0;
  g.for_each_node([&](NodeId id) { n += g.node(id).op.name() == op; });
  return n;
}

RewriteOptions with_target(const std::string& name, bool cost = true) {
  RewriteOptions o;
  o.gate = make_target_gate(std::make_shared<const CostModel>(load_target(name)), cost);
  return o;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Target, ShippedProfilesLoad) {
  for (const char* name : {"ort-cpu", "ort-cuda", "onednn-cpu", "tf-cpu"}) {
    SCOPED_TRACE(name);
    TargetProfile t = load_target(name);
    EXPECT_EQ(t.name, name);
    EXPECT_GT(t.machine.peak_gflops.at(DType::Float32), 0);
    EXPECT_FALSE(t.ops.empty());
    // The YAML calibrate writes reads back to the same profile.
    TargetProfile back = load_target_from_string(target_yaml(t), "back.yaml");
    EXPECT_EQ(target_yaml(back), target_yaml(t));
  }
  try {
    load_target("no-such-target");
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown target 'no-such-target' (known: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ort-cuda"), std::string::npos);
  }
}

// Each bad profile under tests/check/targets states its error: `# expect: file:line:col: message`.
TEST(Target, BadProfilesGiveTheirDocumentedError) {
  fs::current_path(kSrc);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator("tests/check/targets")) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(e.path().string());
    std::string text = read(e.path()), want;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (l.rfind("# expect: ", 0) == 0) want = l.substr(10);
    ASSERT_FALSE(want.empty());
    try {
      load_target(e.path().string());
      ADD_FAILURE() << "loaded";
    } catch (const Error& err) {
      EXPECT_EQ(err.loc().str() + ": " + err.message(), want);
      EXPECT_FALSE(err.source_line().empty());
    }
  }
  EXPECT_GE(files, 6u);
}

TEST(Target, KernelConditions) {
  TargetProfile cuda = load_target("ort-cuda");
  Attributes clip;
  clip.set("activation", std::string("Clip"));
  ValueType x = f32({1, 8, 4, 4});
  EXPECT_EQ(cuda.lacks("com.microsoft.FusedConv", clip, {&x}),
            "no_kernel: com.microsoft.FusedConv with activation Clip on ort-cuda");
  Attributes relu;
  relu.set("activation", std::string("Relu"));
  EXPECT_EQ(cuda.lacks("com.microsoft.FusedConv", relu, {&x}), "");
  EXPECT_EQ(cuda.lacks("com.microsoft.FusedConv", Attributes{}, {&x}),
            "no_kernel: com.microsoft.FusedConv without activation on ort-cuda");
  ValueType h{DType::Float16, {1, 8, 4, 4}, true, {}};
  EXPECT_EQ(cuda.lacks("com.microsoft.FusedConv", relu, {&h}),
            "no_kernel: com.microsoft.FusedConv with input dtype float16 on ort-cuda");
  EXPECT_EQ(cuda.lacks("com.microsoft.NoSuchOp", {}, {}), "no_kernel: com.microsoft.NoSuchOp on ort-cuda");
  EXPECT_EQ(cuda.lacks("Relu", {}, {&x}), "");  // a standard op
  TargetProfile tf = load_target("tf-cpu");
  Attributes nchw;
  nchw.set("data_format", std::string("NCHW"));
  nchw.set("fused_ops", std::vector<std::string>{"BiasAdd", "Relu"});
  EXPECT_EQ(tf.lacks("_FusedConv2D", nchw, {&x}), "no_kernel: _FusedConv2D with data_format NCHW on tf-cpu");
  nchw.set("data_format", std::string("NHWC"));
  EXPECT_EQ(tf.lacks("_FusedConv2D", nchw, {&x}), "");
  EXPECT_EQ(tf.lacks("com.microsoft.FusedConv", relu, {&x}), "no_kernel: com.microsoft.FusedConv on tf-cpu");
}

TEST(Target, ShapeConditions) {
  TargetProfile t = load_target((kSrc / "examples/cost/shape_limits.yaml").string());
  const OpSupport& s = *t.find("com.microsoft.FusedConv");
  EXPECT_EQ(s.typed_inputs(), 2u);
  Attributes relu;
  relu.set("activation", std::string("Relu"));
  ValueType x = f32({1, 16, 8, 8}), w3 = f32({32, 16, 3, 3});
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&x, &w3}), "");
  ValueType x12 = f32({1, 12, 8, 8}), w12 = f32({32, 12, 3, 3});
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&x12, &w12}),
            "no_kernel: com.microsoft.FusedConv with input 0 dim 1 = 12 (needs a multiple of 8) on shape-limits");
  ValueType batch2 = f32({2, 16, 8, 8});
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&batch2, &w3}),
            "no_kernel: com.microsoft.FusedConv with input 0 dim 0 = 2 (needs [1]) on shape-limits");
  ValueType w5 = f32({32, 16, 5, 5});
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&x, &w5}),
            "no_kernel: com.microsoft.FusedConv with input 1 dim 2 = 5 (needs [1, 3]) on shape-limits");
  // Unknown facts pass: an unknown shape, a symbolic dim, an absent input.
  ValueType unknown{DType::Float32, {}, false, {}}, symbolic = f32({-1, 16, 8, 8});
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&unknown, &w3}), "");
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&symbolic, &w3}), "");
  EXPECT_EQ(t.lacks("com.microsoft.FusedConv", relu, {&x}), "");
  // min / max, and a dim counted from the end that the rank does not have.
  TargetProfile m = load_target_from_string(
      "target: m\nmachine: {peak_gflops: {float32: 1}, bandwidth_gbs: 1}\nops:\n  Foo:\n    shape:\n"
      "      - {dim: -1, min: 4, max: 64}\n      - {input: 1, dim: 3, values: [7]}\n",
      "m.yaml");
  ValueType small = f32({2, 2}), big = f32({2, 128}), ok = f32({2, 8}), rank2 = f32({7, 7});
  EXPECT_EQ(m.lacks("Foo", {}, {&small}), "no_kernel: Foo with input 0 dim -1 = 2 (needs >= 4) on m");
  EXPECT_EQ(m.lacks("Foo", {}, {&big}), "no_kernel: Foo with input 0 dim -1 = 128 (needs <= 64) on m");
  EXPECT_EQ(m.lacks("Foo", {}, {&ok}), "");
  EXPECT_EQ(m.lacks("Foo", {}, {&ok, &rank2}), "no_kernel: Foo with input 1 of rank 2 (no dim 3) on m");
  // Written back by target_yaml (calibrate) and read again unchanged.
  EXPECT_EQ(target_yaml(load_target_from_string(target_yaml(t), "back.yaml")), target_yaml(t));
  EXPECT_NE(target_yaml(t).find("- {input: 1, dim: [2, 3], values: [1, 3]}"), std::string::npos) << target_yaml(t);
}

// Conv + Add + Relu as ONNX Runtime fuses it: the CUDA provider only with the Relu (its
// FusedConv takes a residual only with a Relu after it), the CPU provider also without.
TEST(Target, ResidualConvAddReluAsOrtFusesIt) {
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  auto residual = [](bool relu) {
    std::vector<NodeId> conv;
    Graph g = conv_act(8, 8, 8, "", &conv);
    NodeId y = g.add_input("y", f32({1, 8, 8, 8}));
    NodeId add = g.add_node("add", OpType::intern("Add"), {{conv[0], 0}, {y, 0}});
    g.output_infos(add)[0].type = f32({1, 8, 8, 8});
    NodeId last = add;
    if (relu) {
      last = g.add_node("relu", OpType::intern("Relu"), {{add, 0}});
      g.output_infos(last)[0].type = f32({1, 8, 8, 8});
    }
    g.set_outputs({{last, 0}});
    return g;
  };
  auto fused_with_z = [](const Graph& g, const char* activation) {
    std::size_t n = 0;
    g.for_each_node([&](NodeId id) {
      const Node& node = g.node(id);
      const auto* a = node.attrs.get_if<std::string>("activation");
      n += node.op.name() == "com.microsoft.FusedConv" && node.inputs.size() == 4 &&
           (activation ? a && *a == activation : !a);
    });
    return n;
  };
  for (const char* target : {"ort-cuda", "ort-cpu"}) {
    SCOPED_TRACE(target);
    Graph g = residual(true);
    rewrite_graph(g, rules, with_target(target));
    EXPECT_EQ(fused_with_z(g, "Relu"), 1u);
    EXPECT_EQ(g.size(), 5u);  // x, y, w, b and the FusedConv
  }
  Graph cuda = residual(false);
  RewriteReport rep = rewrite_graph(cuda, rules, with_target("ort-cuda"));
  EXPECT_EQ(count_op(cuda, "com.microsoft.FusedConv"), 0u);
  EXPECT_NE(format_stats(rep).find("no_kernel: com.microsoft.FusedConv without activation on ort-cuda 1"),
            std::string::npos)
      << format_stats(rep);
  Graph cpu = residual(false);
  rewrite_graph(cpu, rules, with_target("ort-cpu"));
  EXPECT_EQ(fused_with_z(cpu, nullptr), 1u);
  // Without a target the one-step rule never fires: onnx_conv_add_residual and then
  // onnx_conv_act make the same node, as before it existed.
  Graph greedy = residual(true);
  RewriteReport r = rewrite_graph(greedy, rules);
  EXPECT_EQ(fused_with_z(greedy, "Relu"), 1u);
  bool seen = false;
  for (const RuleStats& st : r.rules) {
    if (st.rule != "onnx_conv_add_relu_residual") continue;
    seen = true;
    EXPECT_EQ(st.applied, 0u);
  }
  EXPECT_TRUE(seen);
}

TEST(Target, GateAppliesShapeConditions) {
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  const std::string limits = (kSrc / "examples/cost/shape_limits.yaml").string();
  Graph fits = conv_act(16, 16, 8, "Relu");
  rewrite_graph(fits, rules, with_target(limits));
  EXPECT_EQ(count_op(fits, "com.microsoft.FusedConv"), 1u);
  Graph odd = conv_act(12, 16, 8, "Relu");
  RewriteReport rep = rewrite_graph(odd, rules, with_target(limits));
  EXPECT_EQ(count_op(odd, "com.microsoft.FusedConv"), 0u);
  EXPECT_NE(format_stats(rep).find("no_kernel: com.microsoft.FusedConv with input 0 dim 1 = 12 (needs a multiple of 8) "
                                   "on shape-limits"),
            std::string::npos)
      << format_stats(rep);
}

TEST(Target, CheckReadsProfiles) {
  CliRun ok = run_cli("check " + src("targets/ort-cuda.yaml") + " " + src("examples/cost/shape_limits.yaml"));
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("ort-cuda.yaml: target ort-cuda, "), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("shape_limits.yaml: target shape-limits, 1 op, ok"), std::string::npos) << ok.out;
  CliRun bad = run_cli("check " + src("tests/check/targets/bad_shape_value.yaml"));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.out.find("bad_shape_value.yaml:8:28: error: a value must be an integer, not '3.5'"), std::string::npos)
      << bad.out;
}

TEST(Target, RooflineEstimates) {
  TargetProfile t = load_target_from_string(
      "target: t\nmachine: {peak_gflops: {float32: 100}, bandwidth_gbs: 10, kernel_overhead_us: 2}\n", "t.yaml");
  CostModel m(t);
  Graph g = conv_act(16, 32, 8, "Relu");
  NodeId conv = *g.find("conv"), act = *g.find("act");
  NodeCost c = m.estimate(g, conv);
  // 2 * (1*32*8*8 outputs) * (16*3*3) = 589,824 FLOPs -> 5.90 us at 100 GFLOP/s; bytes
  // (input 4 KB + weights 18 KB + bias + output 8 KB) / 10 GB/s = 3.1 us: compute bound.
  EXPECT_DOUBLE_EQ(c.flops, 589824.0);
  EXPECT_NEAR(c.us, 589824.0 / 1e5 + 2, 1e-9);
  NodeCost r = m.estimate(g, act);
  EXPECT_DOUBLE_EQ(r.bytes, 2 * 4 * 2048.0);
  EXPECT_NEAR(r.us, 16384.0 / 1e4 + 2, 1e-9);
  EXPECT_TRUE(c.known && r.known);
}

TEST(Target, GateDeclinesWhatTheTargetLacksAndSaysWhy) {
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  Graph plain = conv_act(8, 8, 8, "Clip");
  Graph g = plain;
  RewriteReport greedy = rewrite_graph(g, rules);
  EXPECT_EQ(count_op(g, "com.microsoft.FusedConv"), 1u);
  EXPECT_FALSE(greedy.gated);

  g = plain;
  RewriteReport cuda = rewrite_graph(g, rules, with_target("ort-cuda"));
  EXPECT_EQ(count_op(g, "com.microsoft.FusedConv"), 0u);
  EXPECT_EQ(count_op(g, "Clip"), 1u);
  EXPECT_TRUE(cuda.gated);
  std::string stats = format_stats(cuda);
  EXPECT_NE(stats.find("no_kernel: com.microsoft.FusedConv with activation Clip on ort-cuda 1"), std::string::npos) << stats;
  EXPECT_NE(stats_json(cuda).find("\"no_kernel: com.microsoft.FusedConv with activation Clip on ort-cuda\": 1"),
            std::string::npos);
  std::string why = explain_candidate(plain, rules, "onnx_conv_clip", "act", with_target("ort-cuda"));
  EXPECT_NE(why.find("verdict: does not fire: not applied: no_kernel: com.microsoft.FusedConv with activation Clip on ort-cuda"),
            std::string::npos)
      << why;

  // Relu has a kernel on ort-cuda, and fusing it saves the Relu's pass.
  Graph r = conv_act(8, 8, 8, "Relu");
  Graph rr = r;
  RewriteReport fused = rewrite_graph(rr, rules, with_target("ort-cuda"));
  EXPECT_EQ(count_op(rr, "com.microsoft.FusedConv"), 1u);
  EXPECT_GT(fused.rules[0].saving, 0.0);
  std::string yes = explain_candidate(r, rules, "onnx_conv_act", "act", with_target("ort-cuda"));
  EXPECT_NE(yes.find("saves "), std::string::npos) << yes;
  EXPECT_NE(yes.find("verdict: fires in round 1"), std::string::npos) << yes;
}

namespace {
// A target profile named `name` whose one listed op is FusedConv, with `op_lines` under it,
// loaded from `file`; its text form must read back to the same profile.
TargetProfile fused_conv_profile(const std::string& name, const std::string& op_lines, const std::string& file) {
  const std::string yaml = "target: " + name +
                           "\nstandard_ops: [\"*\"]\nmachine: {peak_gflops: {float32: 100}, bandwidth_gbs: 20}\nops:\n"
                           "  com.microsoft.FusedConv:\n" +
                           op_lines;
  TargetProfile t = load_target_from_string(yaml, file);
  EXPECT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(target_yaml(load_target_from_string(target_yaml(t), "back.yaml")), target_yaml(t));
  return t;
}
}  // namespace

// `pays: false`: the target has the kernel, but it was measured slower than what it replaces,
// so a target-gated rewrite never emits it, whatever the roofline says; the profile's text
// form keeps the field.
TEST(Target, OpMeasuredSlowerIsNeverEmitted) {
  const TargetProfile t = fused_conv_profile("slow-fused",
                                             "    pays: false\n"
                                             "    note: measured 1.4x slower than Conv + Relu\n",
                                             "slow.yaml");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_FALSE(t.ops[0].pays);
  EXPECT_TRUE(t.has_op("com.microsoft.FusedConv"));
  EXPECT_NE(target_yaml(t).find("pays: false"), std::string::npos);

  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  for (bool cost : {true, false}) {
    SCOPED_TRACE(cost);
    Graph g = conv_act(8, 8, 8, "Relu");
    RewriteOptions o;
    o.gate = make_target_gate(std::make_shared<const CostModel>(t), cost);
    RewriteReport r = rewrite_graph(g, rules, o);
    EXPECT_EQ(count_op(g, "com.microsoft.FusedConv"), 0u);
    EXPECT_EQ(count_op(g, "Relu"), 1u);
    std::string stats = format_stats(r);
    EXPECT_NE(stats.find("slower: com.microsoft.FusedConv measured slower than its unfused form on slow-fused"),
              std::string::npos)
        << stats;
  }
  // The same profile without the field fuses.
  Graph g = conv_act(8, 8, 8, "Relu");
  RewriteOptions o;
  const TargetProfile fast = fused_conv_profile(
      "slow-fused", "    dtype: [float32]\n    note: measured 1.4x slower than Conv + Relu\n", "fast.yaml");
  o.gate = make_target_gate(std::make_shared<const CostModel>(fast), false);
  rewrite_graph(g, rules, o);
  EXPECT_EQ(count_op(g, "com.microsoft.FusedConv"), 1u);
}

// `pays_up_to`: a `pays: false` op that was measured faster at small sizes (kernel overhead
// dominating its unfused form) is emitted where its input's size is known and within the
// bound, and declined where it is larger or unknown; the text form keeps the field, and the
// reader refuses it on an op that pays.
TEST(Target, OpSlowerOnlyAboveASizeIsEmittedBelowIt) {
  const TargetProfile t = fused_conv_profile("small-fused",
                                             "    pays: false\n"
                                             "    pays_up_to: {input: 0, elements: 600}\n",
                                             "small.yaml");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].pays_up_to, 600);
  EXPECT_EQ(t.ops[0].pays_up_to_input, 0);
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  auto fused = [&](Graph g) {
    RewriteOptions o;
    o.gate = make_target_gate(std::make_shared<const CostModel>(t), false);
    rewrite_graph(g, rules, o);
    return count_op(g, "com.microsoft.FusedConv");
  };
  EXPECT_EQ(fused(conv_act(8, 8, 8, "Relu")), 1u);   // x: 512 elements
  EXPECT_EQ(fused(conv_act(8, 8, 16, "Relu")), 0u);  // x: 2,048
  Graph unknown = conv_act(8, 8, 8, "Relu");
  unknown.output_infos(unknown.inputs()[0])[0].type = ValueType{};
  EXPECT_EQ(fused(unknown), 0u);
  try {
    load_target_from_string("target: x\nstandard_ops: [\"*\"]\nmachine: {peak_gflops: {float32: 1}, bandwidth_gbs: 1}\n"
                            "ops:\n  Relu:\n    pays_up_to: {elements: 10}\n",
                            "bad.yaml");
    FAIL() << "pays_up_to on an op that pays";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:6:17:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("this op pays"), std::string::npos) << e.what();
  }
}

TEST(Target, CostModelDeclinesWhatDoesNotPay) {
  // A rule that fuses a convolution's Relu even where the convolution has another user
  // (`on_external_use: duplicate`): the convolution is then computed twice, which costs
  // far more than the Relu pass it saves.
  RuleSet rules = load_rule_files({(kSrc / "examples/cost/greedy_hurts_rules.yaml").string()});
  std::vector<NodeId> convs;
  Graph g = conv_act(64, 64, 16, "Relu", &convs);
  NodeId other = g.add_node("other", OpType::intern("Sigmoid"), {{convs[0], 0}});
  g.output_infos(other)[0].type = f32({1, 64, 16, 16});
  g.add_output({other, 0});
  Graph greedy = g;
  rewrite_graph(greedy, rules);
  EXPECT_EQ(count_op(greedy, "com.microsoft.FusedConv"), 1u);
  EXPECT_EQ(count_op(greedy, "Conv"), 1u);  // duplicated
  Graph gated = g;
  RewriteReport rep = rewrite_graph(gated, rules, with_target("ort-cpu"));
  EXPECT_EQ(count_op(gated, "com.microsoft.FusedConv"), 0u);
  ASSERT_EQ(rep.rules[0].declined.size(), 1u);
  EXPECT_EQ(rep.rules[0].declined[0].first, "no_gain on ort-cpu");
  std::string why = explain_candidate(g, rules, "conv_relu_duplicate", "act", with_target("ort-cpu"));
  EXPECT_NE(why.find("not applied: costs "), std::string::npos) << why;
  // Kernel checks alone (no cost model) let it through.
  Graph kernels_only = g;
  rewrite_graph(kernels_only, rules, with_target("ort-cpu", false));
  EXPECT_EQ(count_op(kernels_only, "com.microsoft.FusedConv"), 1u);
}

TEST(Target, GatedRewriteIsDeterministicAcrossThreads) {
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/conv.yaml").string()});
  Graph base;
  NodeId x = base.add_input("x", f32({1, 8, 8, 8}));
  ValueRef v{x, 0};
  // 300 conv + activation pairs alternating Relu / Clip (enough for the parallel path).
  for (int i = 0; i < 300; ++i) {
    NodeId w = constant(base, "w" + std::to_string(i), {8, 8, 3, 3});
    Attributes a;
    a.set("pads", std::vector<std::int64_t>{1, 1, 1, 1});
    NodeId c = base.add_node("c" + std::to_string(i), OpType::intern("Conv"), {v, {w, 0}}, std::move(a));
    base.output_infos(c)[0].type = f32({1, 8, 8, 8});
    NodeId r;
    if (i % 2) {
      NodeId lo = constant(base, "lo" + std::to_string(i), {}), hi = constant(base, "hi" + std::to_string(i), {});
      r = base.add_node("a" + std::to_string(i), OpType::intern("Clip"), {{c, 0}, {lo, 0}, {hi, 0}});
    } else {
      r = base.add_node("a" + std::to_string(i), OpType::intern("Relu"), {{c, 0}});
    }
    base.output_infos(r)[0].type = f32({1, 8, 8, 8});
    v = {r, 0};
  }
  base.add_output(v);
  std::string first;
  for (int threads : {1, 2, 4}) {
    Graph g = base;
    RewriteOptions o = with_target("ort-cuda");
    o.threads = threads;
    rewrite_graph(g, rules, o);
    EXPECT_EQ(count_op(g, "com.microsoft.FusedConv"), 150u);
    std::string text = write_graph_text(g);
    if (first.empty()) first = text;
    EXPECT_EQ(text, first) << threads << " threads";
  }
}

TEST(Target, CheckNamesRulesUnusableOnTheTarget) {
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx").string()});
  auto found = target::check_rules(rules, load_target("ort-cuda"));
  std::set<std::string> unusable, partial;
  for (const auto& f : found) {
    if (f.kind == target::Finding::Kind::Unusable) unusable.insert(f.rule);
    if (f.kind == target::Finding::Kind::Partial) partial.insert(f.rule);
    EXPECT_TRUE(f.loc.known()) << f.rule;
  }
  for (const char* r : {"onnx_conv_leakyrelu", "onnx_conv_leakyrelu_default", "onnx_conv_hardsigmoid",
                        "onnx_conv_hardsigmoid_default", "onnx_conv_clip", "onnx_conv_clip_min", "onnx_conv_clip_attrs",
                        // a FusedConv without an activation: its pattern's `{!activation}` says the spread
                        // Conv brings none
                        "onnx_conv_add_residual"})
    EXPECT_TRUE(unusable.count(r)) << r;
  EXPECT_FALSE(unusable.count("onnx_conv_add_relu_residual"));
  EXPECT_TRUE(partial.count("onnx_conv_act"));  // Relu only of Relu|Tanh|Sigmoid
  EXPECT_FALSE(unusable.count("onnx_conv_act"));
  // On ort-cpu every conv rule is usable.
  for (const auto& f : target::check_rules(rules, load_target("ort-cpu")))
    EXPECT_NE(f.kind, target::Finding::Kind::Unusable) << f.rule << ": " << f.message;
}

TEST(Target, CheckFindsShadowedRulesAndUndoPairs) {
  fs::current_path(kSrc);  // positions as the messages give them: relative to the source tree
  RuleSet rules = load_rule_files({"tests/check/target_rules/shadow_undo.yaml"});
  auto found = target::check_rules(rules, load_target("ort-cpu"));
  std::vector<std::string> got;
  for (const auto& f : found)
    got.push_back(f.loc.str() + ": " + target::finding_kind_name(f.kind) + ": " + f.rule + ": " + f.message);
  ASSERT_EQ(got.size(), 2u) << (got.empty() ? "" : got[0]);
  EXPECT_EQ(got[0],
            "tests/check/target_rules/shadow_undo.yaml:5:5: undoes: fuse: and "
            "tests/check/target_rules/shadow_undo.yaml:17 unfuse undo each other (Relu -> com.microsoft.FusedConv -> "
            "Conv, Relu): oscillation risk");
  EXPECT_EQ(got[1],
            "tests/check/target_rules/shadow_undo.yaml:11:5: shadowed: fuse_again: shadowed by "
            "tests/check/target_rules/shadow_undo.yaml:5 fuse: the same pattern and constraints, and it is tried first "
            "(earlier in rule order)");
}

// The shared models (../shared/models; skipped without them): on ort-cpu the target filter
// and the cost model keep every fusion greedy rewriting makes; on ort-cuda mobilenet_v2
// gets no FusedConv with a Clip activation.
namespace {
std::map<std::string, std::size_t> histogram(const Graph& g) {
  std::map<std::string, std::size_t> h;
  g.for_each_node([&](NodeId n) {
    std::string op(g.node(n).op.name());
    if (const auto* a = g.node(n).attrs.get_if<std::string>("activation")) op += "/" + *a;
    ++h[op];
  });
  return h;
}
}  // namespace

TEST(Target, SharedModelsKeepTodaysCountsOnOrtCpu) {
  const fs::path models = kSrc / ".." / "shared" / "models";
  if (!fs::is_directory(models)) GTEST_SKIP() << "no " << models;
  RuleSet rules = load_rule_files({(kSrc / "rules/onnx").string()});
  std::size_t seen = 0;
  for (const auto& e : fs::directory_iterator(models)) {
    if (e.path().extension() != ".onnx") continue;
    ++seen;
    SCOPED_TRACE(e.path().filename().string());
    Graph g = load_graph(e.path().string());
    Graph greedy = g, cpu = g;
    RewriteReport a = rewrite_graph(greedy, rules);
    RewriteReport b = rewrite_graph(cpu, rules, with_target("ort-cpu"));
    // ort-cpu never creates SkipLayerNormalization (`pays: false`, `slower_than` both forms
    // the rules replace: Add + LayerNormalization at opset 17, Add + the decomposed norm before
    // it, which ONNX Runtime fuses on its own); the residual Adds and the norms stay.
    // Everything else is fused as without a target.
    const auto hg = histogram(greedy), hc = histogram(cpu);
    auto count = [](const auto& h, const std::string& op) {
      auto it = h.find(op);
      return it == h.end() ? std::size_t{0} : static_cast<std::size_t>(it->second);
    };
    EXPECT_EQ(count(hc, "com.microsoft.SkipLayerNormalization"), 0u);
    if (count(hg, "com.microsoft.SkipLayerNormalization") == 0) {
      EXPECT_EQ(hc, hg);
      EXPECT_EQ(a.nodes_after, b.nodes_after);
    } else {
      EXPECT_GT(b.nodes_after, a.nodes_after);
      EXPECT_GE(count(hc, "Add"), count(hg, "Add") + count(hg, "com.microsoft.SkipLayerNormalization"));
      auto others = [](std::map<std::string, std::size_t> h) {
        // The norms' ops and their constants (epsilon, the exponent 2) stay.
        for (const char* op : {"com.microsoft.SkipLayerNormalization", "Add", "LayerNormalization", "ReduceMean", "Sub",
                               "Pow", "Sqrt", "Div", "Mul", "Constant"})
          h.erase(op);
        return h;
      };
      EXPECT_EQ(others(hc), others(hg));
    }
    EXPECT_TRUE(b.gated);
    if (e.path().filename() == "resnet18.onnx") {
      // ORT's CUDA provider fuses Conv + Relu and Conv + Add + Relu (the residual as Z):
      // every convolution of resnet18, all with Relu, 8 with a fourth input.
      Graph cuda = g;
      rewrite_graph(cuda, rules, with_target("ort-cuda"));
      EXPECT_EQ(histogram(cuda)["com.microsoft.FusedConv/Relu"], 17u);
      EXPECT_EQ(histogram(cuda)["Add"], 0u);
      std::size_t with_z = 0;
      cuda.for_each_node([&](NodeId n) { with_z += cuda.node(n).inputs.size() == 4; });
      EXPECT_EQ(with_z, 8u);
    }
    if (e.path().filename() != "mobilenet_v2.onnx") continue;
    Graph cuda = g;
    rewrite_graph(cuda, rules, with_target("ort-cuda"));
    auto h = histogram(cuda);
    EXPECT_EQ(h["com.microsoft.FusedConv/Clip"], 0u);
    EXPECT_GT(histogram(greedy)["com.microsoft.FusedConv/Clip"], 0u);
  }
  EXPECT_GE(seen, 4u);
}

TEST(Target, CommandLine) {
  using graphfuse::testutil::run_cli;
  const std::string src = kSrc.string();
  auto r = run_cli("check --target ort-cuda " + src + "/rules/onnx");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: rule onnx_conv_clip [unusable]: creates com.microsoft.FusedConv with activation Clip, "
                       "which ort-cuda does not implement"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" on ort-cuda: "), std::string::npos);
  r = run_cli("apply -r " + src + "/rules/seed.yaml " + src + "/examples/seed_chain.graph --target no-such-target");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("unknown target 'no-such-target'"), std::string::npos) << r.out;
  r = run_cli("apply -r " + src + "/rules/seed.yaml " + src + "/examples/seed_chain.graph --target " + src +
              "/tests/check/targets/bad_dtype.yaml");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("bad_dtype.yaml:7:13: error: unknown dtype 'float33'"), std::string::npos) << r.out;
  // The seed rule's made-up op is listed as missing on tf-cpu: nothing fuses, and --stats says why.
  r = run_cli("apply -r " + src + "/rules/seed.yaml " + src + "/examples/seed_chain.graph --target tf-cpu --stats");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("declined 1 (no_kernel: FusedConv2D_BiasAdd_ReLU on tf-cpu 1)"), std::string::npos) << r.out;
}

// Each kernel kind follows its own efficiency curve: a depthwise or 1x1 convolution, a
// Transpose and a Sigmoid are not timed like a 3x3 convolution or a Relu.
TEST(Target, KernelKindsFollowTheirOwnCurves) {
  CostModel m(load_target_from_string("target: t\nmachine:\n  peak_gflops: {float32: 100}\n  bandwidth_gbs: 10\n"
                                      "  kernel_overhead_us: 0\n  efficiency:\n    conv: [[1, 1]]\n    dwconv: [[1, 0.1]]\n"
                                      "    eltwise: [[1, 1]]\n    math: [[1, 0.25]]\n",
                                      "kinds.yaml"));
  ValueType x = f32({1, 8, 8, 8}), dw = f32({8, 1, 3, 3}), pw = f32({8, 8, 1, 1}), full = f32({8, 8, 3, 3});
  Attributes grouped, none;
  grouped.set("group", std::int64_t{8});
  auto cost = [&](std::string_view op, const Attributes& a, std::vector<const ValueType*> in) {
    CostQuery q;
    q.op = op;
    q.attrs = &a;
    q.inputs = std::move(in);
    q.output = &x;
    return m.estimate(q);
  };
  NodeCost d = cost("Conv", grouped, {&x, &dw}), p = cost("Conv", none, {&x, &pw}), c = cost("Conv", none, {&x, &full});
  EXPECT_EQ(d.kind, KernelKind::DepthwiseConv);
  EXPECT_EQ(p.kind, KernelKind::Conv1x1);
  EXPECT_EQ(c.kind, KernelKind::Conv);
  // 2 x 512 outputs x 9 weights per output channel = 9216 FLOPs at 10% of 100 GFLOP/s.
  EXPECT_NEAR(d.us, 9216.0 / 1e4, 1e-9);
  // conv1x1 has no curve of its own: the conv curve.
  EXPECT_NEAR(p.us, std::max(2 * 512.0 * 8 / 1e5, (2 * 2048.0 + 256) / 1e4), 1e-9);
  NodeCost s = cost("Sigmoid", none, {&x}), r = cost("Relu", none, {&x}), t = cost("Transpose", none, {&x});
  EXPECT_EQ(s.kind, KernelKind::Math);
  EXPECT_EQ(t.kind, KernelKind::Transpose);
  EXPECT_NEAR(s.us, 4 * r.us, 1e-9);
  EXPECT_NEAR(t.us, r.us, 1e-9);  // no transpose curve: the eltwise one
}

// A horizontal fusion is judged like any other: the merged convolution's weight is the
// concatenation's (summed along its axis), and the split pass over the merged output costs
// more than the kernel launch it saves on examples/cost/horizontal_hurts.yaml.
TEST(Target, HorizontalFusionThatDoesNotPayIsDeclined) {
  RuleSet rules = load_rule_files({(kSrc / "rules/tf/horizontal.yaml").string()});
  Graph g = load_graph((kSrc / "examples/cost/horizontal_hurts.yaml").string());
  RewriteOptions greedy_opt;
  greedy_opt.only_rules = {"tf_conv2d_horizontal"};
  Graph greedy = g;
  rewrite_graph(greedy, rules, greedy_opt);
  EXPECT_EQ(count_op(greedy, "SplitV"), 2u);
  RewriteOptions o = with_target("ort-cpu");
  o.only_rules = greedy_opt.only_rules;
  Graph gated = g;
  RewriteReport rep = rewrite_graph(gated, rules, o);
  EXPECT_EQ(count_op(gated, "SplitV"), 0u);
  EXPECT_EQ(count_op(gated, "Conv2D"), 4u);
  ASSERT_FALSE(rep.rules.empty());
  ASSERT_EQ(rep.rules[0].declined.size(), 1u);
  EXPECT_EQ(rep.rules[0].declined[0].first, "no_gain on ort-cpu");
  std::string why = explain_candidate(g, rules, "tf_conv2d_horizontal", "c1a", o);
  // Two 1x1 convolutions of 64 channels each vs one of 128 and a split: the estimate
  // knows the merged weight is [1, 1, 64, 128].
  EXPECT_NE(why.find("not applied: costs "), std::string::npos) << why;
}

// A value a node reads twice is one buffer read once (SkipSimplifiedLayerNormalization(x, x),
// the checker-valid form of an RMS norm, costs what SimplifiedLayerNormalization(x) costs);
// two distinct values of one shape are two reads.
TEST(Target, AValueReadTwiceCountsOnce) {
  CostModel m(load_target_from_string(
      "target: t\nmachine: {peak_gflops: {float32: 100}, bandwidth_gbs: 10, kernel_overhead_us: 1}\n", "t.yaml"));
  ValueType x = f32({2, 16, 64}), y = f32({2, 16, 64}), gamma = f32({64});
  auto cost = [&](std::string_view op, std::vector<const ValueType*> in) {
    CostQuery q;
    q.op = op;
    q.inputs = std::move(in);
    q.output = &x;
    return m.estimate(q);
  };
  NodeCost plain = cost("SimplifiedLayerNormalization", {&x, &gamma});
  NodeCost self = cost("com.microsoft.SkipSimplifiedLayerNormalization", {&x, &x, &gamma});
  NodeCost skip = cost("com.microsoft.SkipSimplifiedLayerNormalization", {&x, &y, &gamma});
  EXPECT_DOUBLE_EQ(self.bytes, plain.bytes);
  EXPECT_DOUBLE_EQ(self.us, plain.us);
  EXPECT_DOUBLE_EQ(skip.bytes, plain.bytes + 4 * 2048.0);
}

// `slower_than` limits a `pays: false` to the form it was measured against: on ort-cpu,
// SkipLayerNormalization was measured against Add + LayerNormalization, so that rewrite is
// declined while the decomposed norm (ReduceMean, Sub, Pow, ...) into it is not.
TEST(Target, SlowerThanDeclinesOnlyTheMeasuredForm) {
  const std::string yaml =
      "target: t\nstandard_ops: [\"*\"]\nmachine: {peak_gflops: {float32: 100}, bandwidth_gbs: 20}\n"
      "ops:\n  com.microsoft.SkipLayerNormalization:\n    pays: false\n"
      "    slower_than: [Add, LayerNormalization]\n";
  TargetProfile t = load_target_from_string(yaml, "t.yaml");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].slower_than, (std::vector<std::string>{"Add", "LayerNormalization"}));
  EXPECT_EQ(target_yaml(load_target_from_string(target_yaml(t), "back.yaml")), target_yaml(t));
  // On an op that pays it is an error (tests/check/targets/slower_than_paying_op.yaml).

  RuleSet rules = load_rule_files({(kSrc / "rules/onnx/layernorm.yaml").string()});
  // Layers 1 and 2 decomposed, layer 3 a broadcast that stays, layer 4 Add + LayerNormalization.
  Graph g = load_graph((kSrc / "tests/rules/graphs/onnx_skip_layernorm_shapes.yaml").string());
  RewriteOptions o;
  o.gate = make_target_gate(std::make_shared<const CostModel>(t), false);
  RewriteReport r = rewrite_graph(g, rules, o);
  EXPECT_EQ(count_op(g, "com.microsoft.SkipLayerNormalization"), 2u);
  EXPECT_EQ(count_op(g, "LayerNormalization"), 1u);
  EXPECT_NE(format_stats(r).find("slower: com.microsoft.SkipLayerNormalization"), std::string::npos);
}
