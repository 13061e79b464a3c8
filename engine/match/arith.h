// Arithmetic of rule expressions (`dim(c, 1) == 2 * dim(x, 1)`, `value(a) + value(b)`) on
// attribute values: numbers, and number lists element by element.
#pragma once

#include <optional>

#include "graphfuse/attribute.h"

namespace graphfuse::match {

enum class ArithOp { Add, Sub, Mul, Div, Mod };

/// `l op r`. Two ints give an int (`/` rounds down, `%` takes the divisor's sign, as
/// Python's // and %); an int and a float give a float. A list and a number apply the
/// number to every element; two lists of one length go element by element. Nothing
/// (nullopt) for other kinds, lists of different lengths, division by zero or an int64
/// overflow: an expression that cannot be computed is an unknown fact.
std::optional<AttrValue> arith(ArithOp op, const AttrValue& l, const AttrValue& r);

/// `-v` for a number or a number list.
std::optional<AttrValue> negate(const AttrValue& v);

}  // namespace graphfuse::match
