// List attributes as expressions build and take them apart: items into one homogeneous
// list, a list's size and element, two lists joined.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::match {

/// The int list an evaluated term holds, or nullopt (unknown, or another kind).
std::optional<std::vector<std::int64_t>> as_ints(const std::optional<AttrValue>& v);
/// Evaluated list items as one homogeneous attribute list (ints; ints and floats give
/// floats; strings; bools), nullopt when they mix kinds.
std::optional<AttrValue> make_list(const std::vector<AttrValue>& items);
/// The number of items of a list (characters of a string); 0 for a scalar.
std::size_t list_size(const AttrValue& v);
/// Element i of a list attribute (negative from the end), or nullopt.
std::optional<AttrValue> list_at(const AttrValue& l, std::int64_t i);
/// Two lists of one kind joined (an int list and a float list give floats).
std::optional<AttrValue> list_concat(const AttrValue& l, const AttrValue& r);

}  // namespace graphfuse::match
