// mobilenet_v2-style blocks through the fast executor (channels-last, recycled uninitialized
// output buffers) against the reference kernels.
#include "kernels/test_util.h"

namespace {

using graphfuse::Graph;
using graphfuse::NodeId;
using graphfuse::OpType;

// x -> FusedConv 1x1 expand (Clip 0..6) -> FusedConv depthwise 3x3 stride s (Clip)
//   -> Conv 1x1 project, then (stride 1) FusedConv(project, Z = x) as the residual, and a
// plain Add of the block output with itself so an elementwise kernel sits in the chain.
Graph block_graph(std::int64_t c, std::int64_t hw, std::int64_t expand, std::int64_t stride) {
  Graph g;
  const NodeId x = float_input(g, "x", {1, c, hw, hw});
  auto cst = [&](const std::string& id, Shape s) {
    return g.add_node(id, OpType::intern("Const"), {}, attrs({{"shape", s}}));
  };
  const std::int64_t e = c * expand;
  Attributes clip = attrs({{"activation", std::string("Clip")}, {"activation_params", std::vector<float>{0.0f, 6.0f}}});
  const NodeId ex = g.add_node("expand", OpType::intern("com.microsoft.FusedConv"),
                               {{x, 0}, {cst("we", {e, c, 1, 1}), 0}, {cst("be", {e}), 0}}, clip);
  Attributes dw = clip;
  dw.set("group", e);
  dw.set("pads", Shape{1, 1, 1, 1});
  dw.set("strides", Shape{stride, stride});
  const NodeId d = g.add_node("dw", OpType::intern("com.microsoft.FusedConv"),
                              {{ex, 0}, {cst("wd", {e, 1, 3, 3}), 0}, {cst("bd", {e}), 0}}, dw);
  NodeId out;
  if (stride == 1) {
    out = g.add_node("project", OpType::intern("com.microsoft.FusedConv"),
                     {{d, 0}, {cst("wp", {c, e, 1, 1}), 0}, {cst("bp", {c}), 0}, {x, 0}});
  } else {
    out = g.add_node("project", OpType::intern("Conv"), {{d, 0}, {cst("wp", {c, e, 1, 1}), 0}, {cst("bp", {c}), 0}});
  }
  const NodeId sum = g.add_node("add", OpType::intern("Add"), {{out, 0}, {out, 0}});
  g.add_output({sum, 0});
  return g;
}

TEST(FastBlocks, InvertedResidualMatchesReference) {
  // Channel counts that are and are not multiples of oneDNN's 16-wide blocks.
  struct Case {
    std::int64_t c, hw, expand, stride;
  };
  for (const Case k : {Case{16, 14, 6, 1}, Case{24, 9, 6, 2}, Case{5, 8, 3, 1}}) {
    const Graph g = block_graph(k.c, k.hw, k.expand, k.stride);
    const auto expected = gk::run_graph(g, {}, {gk::KernelSet::Reference, 1, 5, {}});
    for (int threads : {1, 2}) {
      gk::Executor ex(g, {gk::KernelSet::Fast, threads, 5, {}});
      const auto in = gk::make_random_inputs(g, 5);
      // Twice: the second run gets the first run's recycled (not re-zeroed) buffers.
      for (int run = 0; run < 2; ++run)
        expect_close(ex.run(in).at(0), expected.at(0), 1e-4, 1e-5,
                     "c=" + std::to_string(k.c) + " threads=" + std::to_string(threads) +
                         " run=" + std::to_string(run));
    }
  }
}

// Recycled buffers hold the previous run's values; a different input must still give
// exactly its own result (a kernel that skipped elements would show the old ones).
TEST(FastBlocks, RecycledOutputsCarryNothingOver) {
  const Graph g = block_graph(16, 10, 4, 1);
  gk::Executor ex(g, {gk::KernelSet::Fast, 2, 9, {}});
  const Tensor a = rnd({1, 16, 10, 10}, 1), b = rnd({1, 16, 10, 10}, 2);
  const Tensor first_b = ex.run({b}).at(0);
  for (int i = 0; i < 3; ++i) {
    (void)ex.run({a});
    const Tensor again = ex.run({b}).at(0);
    EXPECT_EQ(*again.data, *first_b.data) << "run " << i;
  }
  expect_close(first_b, gk::run_graph(g, {b}, {gk::KernelSet::Reference, 1, 9, {}}).at(0));
}

// A TF-style chain (NHWC): _FusedConv2D (BiasAdd, Elu) -> FusedConv2D_BiasAdd_Relu6 ->
// _FusedConv2D (BiasAdd, Add = x, Relu) -> Conv2D. Every output is over the pool's 4 KiB
// floor; c1 (1.3 MFLOP) and c3 (0.66) are above the serial-execution bound (0.5 MFLOP,
// kernels/fast/parallelism.h) and c2, c4 below it, so two threads run both oneDNN paths.
Graph tf_chain_graph() {
  Graph g;
  const NodeId x = float_input(g, "x", {1, 12, 12, 16});
  auto cst = [&](const std::string& id, Shape s) {
    return g.add_node(id, OpType::intern("Const"), {}, attrs({{"shape", s}}));
  };
  auto conv_attrs = [](const std::string& padding, std::vector<std::string> fused) {
    Attributes a = attrs({{"strides", Shape{1, 1, 1, 1}}, {"padding", padding}});
    if (!fused.empty()) {
      a.set("num_args", static_cast<std::int64_t>(fused.size() > 1 && fused[1] == "Add" ? 2 : 1));
      a.set("fused_ops", std::move(fused));
    }
    return a;
  };
  const NodeId c1 = g.add_node("c1", OpType::intern("_FusedConv2D"),
                               {{x, 0}, {cst("w1", {3, 3, 16, 32}), 0}, {cst("b1", {32}), 0}},
                               conv_attrs("SAME", {"BiasAdd", "Elu"}));
  const NodeId c2 = g.add_node("c2", OpType::intern("FusedConv2D_BiasAdd_Relu6"),
                               {{c1, 0}, {cst("w2", {1, 1, 32, 16}), 0}, {cst("b2", {16}), 0}},
                               conv_attrs("VALID", {}));
  const NodeId c3 = g.add_node("c3", OpType::intern("_FusedConv2D"),
                               {{c2, 0}, {cst("w3", {3, 3, 16, 16}), 0}, {cst("b3", {16}), 0}, {x, 0}},
                               conv_attrs("SAME", {"BiasAdd", "Add", "Relu"}));
  const NodeId c4 = g.add_node("c4", OpType::intern("Conv2D"), {{c3, 0}, {cst("w4", {1, 1, 16, 16}), 0}},
                               conv_attrs("VALID", {}));
  g.add_output({c4, 0});
  return g;
}

// The TF convolutions take their outputs from the fast pool (recycled, not zero-filled):
// they must match the reference and carry nothing over from a previous run's values.
TEST(FastBlocks, TfConvChainOnRecycledBuffers) {
  const Graph g = tf_chain_graph();
  const Tensor a = rnd({1, 12, 12, 16}, 3), b = rnd({1, 12, 12, 16}, 4);
  const Tensor expected = gk::run_graph(g, {b}, {gk::KernelSet::Reference, 1, 7, {}}).at(0);
  for (int threads : {1, 2}) {
    gk::Executor ex(g, {gk::KernelSet::Fast, threads, 7, {}});
    const Tensor first_b = ex.run({b}).at(0);
    expect_close(first_b, expected, 1e-4, 1e-5, "threads=" + std::to_string(threads));
    for (int i = 0; i < 3; ++i) {
      (void)ex.run({a});
      const Tensor again = ex.run({b}).at(0);
      EXPECT_EQ(*again.data, *first_b.data) << "threads " << threads << " run " << i;
    }
  }
}

}  // namespace
