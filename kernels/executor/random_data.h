// Seeded random tensors for graph inputs and data-less constants (executor internals).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/util.h"
#include "graphfuse/graph.h"

namespace graphfuse::kernels {

/// How a random constant's values are scaled, chosen from how the graph uses it.
enum class RandomRole {
  Input,     ///< uniform [-1, 1)
  Weight,    ///< uniform, scaled by sqrt(3 / fan_in) so deep nets keep unit-ish activations
  Small,     ///< vectors (biases, BN shift/mean): uniform [-0.1, 0.1)
  Positive,  ///< BN variance / scale: uniform [0.5, 1.5)
};

/// Deterministic float32 data: depends only on (seed, name, shape, role), never on the
/// platform (a splitmix64 stream, not std::uniform_real_distribution).
Tensor random_tensor(std::uint64_t seed, std::string_view name, const Shape& shape, RandomRole role);

/// The role of the constant v from its consumers (BatchNormalization inputs, ranks).
RandomRole role_of_constant(const Graph& g, NodeId n, const Shape& shape);

}  // namespace graphfuse::kernels
