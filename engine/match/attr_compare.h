// Comparing attribute values in pattern constraints (numeric-aware, lists included).
#pragma once

#include "graphfuse/attribute.h"
#include "match/program.h"

namespace graphfuse::match {

/// True when `a` (a node's attribute) satisfies `a cmp b`. Ints and floats compare
/// numerically (so `strides = [1, 1]` matches float lists too); empty lists of any
/// kind are equal; ordering works on numbers and strings; `in` needs a list `b`.
/// Has/Absent are decided by the caller (they look at presence, not values).
bool attr_compare(const AttrValue& a, Cmp cmp, const AttrValue& b);

/// "==", "!=", "<", "<=", ">", ">=", "in", "has", "absent".
const char* cmp_name(Cmp c);

}  // namespace graphfuse::match
