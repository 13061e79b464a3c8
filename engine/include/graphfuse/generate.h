// Seeded synthetic graphs: CNN-like graphs of any size, for examples, tests and benchmarks.
#pragma once

#include <cstdint>

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

}  // namespace graphfuse
