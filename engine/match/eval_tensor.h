// Builtins that compute with a constant tensor's data (slice), kept apart from eval.cpp's
// scalar and list builtins.
#pragma once

#include <optional>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::match {

/// `slice(x, axis, start, end[, step])`: the elements start, start + step, ... below end of
/// constant x along `axis` (negative axis, start and end count from the end; step >= 1), as a
/// tensor of x's dtype and rank. nullopt when x is not a constant tensor with data, the range
/// is empty or outside x, or the step is not positive.
std::optional<AttrValue> slice_constant(const Graph& g, ValueRef x, std::int64_t axis, std::int64_t start,
                                        std::int64_t end, std::int64_t step = 1);

/// `join(axis, a, b, c)`: constants a, b and c concatenated along `axis` (negative counts
/// from the end), as one tensor of their dtype. nullopt unless all are constants with data
/// of one dtype and rank whose other dims agree.
std::optional<AttrValue> join_constants(const Graph& g, const std::vector<ValueRef>& xs, std::int64_t axis);

/// `lower_triangular(x)`: whether x is provably a lower-triangular 0/1-style mask over its
/// last two axes, element (i, j) nonzero exactly when j <= i: a constant of rank >= 2 with
/// data, or a Slice of such a value that starts at 0 with step 1 on whichever of the last
/// two axes it cuts (a top-left window keeps every element's (i, j), so it keeps the
/// property: a dynamic export's `bias[:, :, :seq, :seq]`). false when a constant is not
/// lower triangular; nullopt when nothing can be said.
std::optional<AttrValue> lower_triangular(const Graph& g, ValueRef x);

/// `max_value(x)`: the largest element of x (int64 for integer dtypes, else float): of a
/// constant with data, or the fill of a ConstantOfShape (its `value`, 0 when absent), whose
/// every element is that fill whatever the run-time shape. nullopt for anything else, an
/// empty constant, or a NaN.
std::optional<AttrValue> max_value(const Graph& g, ValueRef x);

}  // namespace graphfuse::match
