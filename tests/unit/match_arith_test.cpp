// Rule-expression arithmetic: ints stay ints (floor division and modulo), floats widen,
// lists go element by element, and what cannot be computed is unknown.
#include <gtest/gtest.h>

#include "match/arith.h"

using namespace graphfuse;
using match::arith;
using match::ArithOp;

namespace {
using Ints = std::vector<std::int64_t>;
using Floats = std::vector<float>;
AttrValue I(std::int64_t v) { return v; }
}  // namespace

TEST(MatchArith, IntsFloorLikePython) {
  EXPECT_EQ(arith(ArithOp::Add, I(2), I(3)), AttrValue(I(5)));
  EXPECT_EQ(arith(ArithOp::Div, I(7), I(2)), AttrValue(I(3)));
  EXPECT_EQ(arith(ArithOp::Div, I(-7), I(2)), AttrValue(I(-4)));
  EXPECT_EQ(arith(ArithOp::Mod, I(-7), I(2)), AttrValue(I(1)));
  EXPECT_EQ(arith(ArithOp::Mod, I(7), I(-2)), AttrValue(I(-1)));
  EXPECT_FALSE(arith(ArithOp::Div, I(1), I(0)));
  EXPECT_FALSE(arith(ArithOp::Mod, I(1), I(0)));
  EXPECT_FALSE(arith(ArithOp::Mul, I(INT64_MAX), I(2)));
  EXPECT_FALSE(arith(ArithOp::Div, I(INT64_MIN), I(-1)));
}

TEST(MatchArith, FloatsListsAndOtherKinds) {
  EXPECT_EQ(arith(ArithOp::Div, I(1), AttrValue(2.0f)), AttrValue(0.5f));
  EXPECT_EQ(arith(ArithOp::Add, AttrValue(1.5f), AttrValue(2.0f)), AttrValue(3.5f));
  EXPECT_FALSE(arith(ArithOp::Div, AttrValue(1.0f), AttrValue(0.0f)));
  EXPECT_EQ(arith(ArithOp::Mul, AttrValue(Ints{1, 2, 3}), I(2)), AttrValue(Ints{2, 4, 6}));
  EXPECT_EQ(arith(ArithOp::Sub, I(10), AttrValue(Ints{1, 2})), AttrValue(Ints{9, 8}));
  EXPECT_EQ(arith(ArithOp::Add, AttrValue(Ints{1, 2}), AttrValue(Floats{0.5f, 0.5f})), AttrValue(Floats{1.5f, 2.5f}));
  EXPECT_FALSE(arith(ArithOp::Add, AttrValue(Ints{1, 2}), AttrValue(Ints{1})));
  EXPECT_FALSE(arith(ArithOp::Add, AttrValue(std::string("a")), I(1)));
  EXPECT_FALSE(arith(ArithOp::Add, AttrValue(true), I(1)));
  EXPECT_EQ(match::negate(AttrValue(Ints{1, -2})), AttrValue(Ints{-1, 2}));
  EXPECT_EQ(match::negate(AttrValue(2.5f)), AttrValue(-2.5f));
}
