// Seeded synthetic graphs: CNN-like graphs of any size, for examples, tests and benchmarks.
#pragma once

#include <cstdint>

#include "graphfuse/graph.h"

namespace graphfuse {

/// What the generator mixes in, as per-block probabilities.
struct GenerateOptions {
  std::size_t nodes = 1000;  ///< approximate node count (within one block of it)
  std::uint64_t seed = 1;
  bool matmul_chains = true;  ///< include MatMul -> Add blocks
};

/// Builds a CNN-like graph (TF op names) of about `nodes` nodes from a seed. Blocks:
/// fusible Conv2D -> BiasAdd -> ReLU chains, residual Adds, Conv2D outputs with two
/// consumers (must not fuse), BiasAdd without ReLU, MatMul -> Add chains, and at each
/// quarter of the budget a stride-2 downsample block (strided conv branch and strided 1x1
/// shortcut). Shapes are consistent, so the graph runs on the executor: the input is typed
/// float32 NHWC [1, 16, 16, 8], and the four stages are 16x16x8, 8x8x16, 4x4x32, 2x2x64.
/// The same options always give the same graph.
Graph generate_cnn_graph(const GenerateOptions& opt);

}  // namespace graphfuse
