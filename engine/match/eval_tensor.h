// Builtins that compute with a constant tensor's data (slice), kept apart from eval.cpp's
// scalar and list builtins.
#pragma once

#include <optional>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::match {

/// `slice(x, axis, start, end)`: the elements [start, end) of constant x along `axis`
/// (negative axis, start and end count from the end), as a tensor of x's dtype and rank.
/// nullopt when x is not a constant tensor with data or the range is empty or outside x.
std::optional<AttrValue> slice_constant(const Graph& g, ValueRef x, std::int64_t axis, std::int64_t start,
                                        std::int64_t end);

/// `join(axis, a, b, c)`: constants a, b and c concatenated along `axis` (negative counts
/// from the end), as one tensor of their dtype. nullopt unless all are constants with data
/// of one dtype and rank whose other dims agree.
std::optional<AttrValue> join_constants(const Graph& g, const std::vector<ValueRef>& xs, std::int64_t axis);

}  // namespace graphfuse::match
