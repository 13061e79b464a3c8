// Seeded synthetic graphs: CNN-like graphs of any size, for examples, tests and benchmarks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

/// The kind of network generate_cnn_graph builds.
enum class GraphShape : std::uint8_t {
  Cnn,   ///< a ResNet-like chain of blocks (see generate_cnn_graph)
  Wide,  ///< wide blocks: one value feeding 8-16 branches of 1-3 fusible chains each
};

/// What the generator mixes in, as per-block probabilities.
struct GenerateOptions {
  std::size_t nodes = 1000;  ///< approximate node count (within one block of it)
  std::uint64_t seed = 1;
  bool matmul_chains = true;  ///< include MatMul -> Add blocks (Cnn only)
  GraphShape shape = GraphShape::Cnn;
};

/// Builds a CNN-like graph (TF op names) of about `nodes` nodes from a seed. Blocks:
/// fusible Conv2D -> BiasAdd -> ReLU chains, residual Adds, Conv2D outputs with two
/// consumers (must not fuse), BiasAdd without ReLU, MatMul -> Add chains, and at each
/// quarter of the budget a stride-2 downsample block (strided conv branch and strided 1x1
/// shortcut). Shapes are consistent, so the graph runs on the executor: the input is typed
/// float32 NHWC [1, 16, 16, 8], and the four stages are 16x16x8, 8x8x16, 4x4x32, 2x2x64.
/// The same options always give the same graph.
///
/// GraphShape::Wide gives the rewriter another shape to work on: more fusions per node,
/// longer chains and wide fan-out. Each block reads the current value x (16x16x8 all
/// along) through 8-16 branches; a branch is 1-3 Conv2D -> BiasAdd -> ReLU chains in a row,
/// every convolution of the block reading one shared weight constant and every BiasAdd one
/// shared bias constant (so x and the two constants each have many consumers); the branches
/// are summed by a tree of Adds into the next block's x.
Graph generate_cnn_graph(const GenerateOptions& opt);

/// The fan-out shapes: a few values read by a large share of the graph.
enum class FanoutForm {
  /// `chains` chains of Mul(prev, 1) -> Add(., 0) -> Add(., x) -> Xor(., k) (int64
  /// scalars), every chain reading the same inputs x and k and the same constants 1 and
  /// 0 (each used by about a quarter of the nodes); the chain ends combined by a row of
  /// Xors into the one output. tests/rules/fanout.yaml's Mul(x, 1) -> x and
  /// Add(x, 0) -> x remove half the nodes.
  Chains,
  /// Shared weights: chains of Add(MatMul(prev, W), b) -> Relu, every MatMul reading the
  /// same weight W and every Add the same bias b (float32 [8, 8] and [8]).
  Weights,
  /// Shared shape constants: chains of Reshape(Reshape(prev, s1), s2) -> Tanh, every
  /// Reshape reading one of two int64 shape constants.
  Shapes,
};

struct FanoutOptions {
  std::size_t nodes = 1000;  ///< approximate node count (within one link per chain of it)
  FanoutForm form = FanoutForm::Chains;
  std::size_t chains = 1000;  ///< fewer when the node budget is small
};

/// Builds a fan-out graph; nodes are numbered chain by chain (ids n0, n1, ...), so the
/// same options always give the same graph.
Graph generate_fanout_graph(const FanoutOptions& opt);
/// "chains", "weights" or "shapes"; nullopt for anything else.
std::optional<FanoutForm> fanout_form(std::string_view name);

}  // namespace graphfuse
