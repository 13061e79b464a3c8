// Number and number-list arithmetic for rule expressions.
#include "match/arith.h"

#include <cmath>

namespace graphfuse::match {

namespace {

std::optional<std::int64_t> int_op(ArithOp op, std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  switch (op) {
    case ArithOp::Add: if (__builtin_add_overflow(a, b, &out)) return std::nullopt; return out;
    case ArithOp::Sub: if (__builtin_sub_overflow(a, b, &out)) return std::nullopt; return out;
    case ArithOp::Mul: if (__builtin_mul_overflow(a, b, &out)) return std::nullopt; return out;
    case ArithOp::Div:
    case ArithOp::Mod: {
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      std::int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) --q, m += b;  // round down, as Python's // and %
      return op == ArithOp::Div ? q : m;
    }
  }
  return std::nullopt;
}

std::optional<float> float_op(ArithOp op, double a, double b) {
  double out = 0;
  switch (op) {
    case ArithOp::Add: out = a + b; break;
    case ArithOp::Sub: out = a - b; break;
    case ArithOp::Mul: out = a * b; break;
    case ArithOp::Div:
      if (b == 0) return std::nullopt;
      out = a / b;
      break;
    case ArithOp::Mod:
      if (b == 0) return std::nullopt;
      out = a - std::floor(a / b) * b;
      break;
  }
  if (!std::isfinite(out)) return std::nullopt;
  return static_cast<float>(out);
}

// A number or a number list, read uniformly.
struct Nums {
  bool list = false;
  bool ints = true;
  std::vector<std::int64_t> i;
  std::vector<double> f;
  std::size_t size() const { return ints ? i.size() : f.size(); }
};

std::optional<Nums> nums(const AttrValue& v) {
  Nums n;
  if (auto* x = std::get_if<std::int64_t>(&v)) n.i = {*x};
  else if (auto* x = std::get_if<float>(&v)) n.ints = false, n.f = {static_cast<double>(*x)};
  else if (auto* x = std::get_if<std::vector<std::int64_t>>(&v)) n.list = true, n.i = *x;
  else if (auto* x = std::get_if<std::vector<float>>(&v)) n.list = true, n.ints = false, n.f.assign(x->begin(), x->end());
  else return std::nullopt;
  return n;
}

double as_double(const Nums& n, std::size_t k) {
  return n.ints ? static_cast<double>(n.i[k]) : n.f[k];
}

}  // namespace

std::optional<AttrValue> arith(ArithOp op, const AttrValue& l, const AttrValue& r) {
  auto a = nums(l), b = nums(r);
  if (!a || !b) return std::nullopt;
  if (a->list && b->list && a->size() != b->size()) return std::nullopt;
  const std::size_t n = a->list ? a->size() : b->size();
  const bool ints = a->ints && b->ints;
  std::vector<std::int64_t> is;
  std::vector<float> fs;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t ka = a->list ? k : 0, kb = b->list ? k : 0;
    if (ints) {
      auto v = int_op(op, a->i[ka], b->i[kb]);
      if (!v) return std::nullopt;
      is.push_back(*v);
    } else {
      auto v = float_op(op, as_double(*a, ka), as_double(*b, kb));
      if (!v) return std::nullopt;
      fs.push_back(*v);
    }
  }
  if (!a->list && !b->list) return ints ? AttrValue(is[0]) : AttrValue(fs[0]);
  return ints ? AttrValue(std::move(is)) : AttrValue(std::move(fs));
}

std::optional<AttrValue> negate(const AttrValue& v) {
  return arith(ArithOp::Sub, std::holds_alternative<std::vector<float>>(v) || std::holds_alternative<float>(v)
                                 ? AttrValue(0.0f)
                                 : AttrValue(std::int64_t{0}),
               v);
}

}  // namespace graphfuse::match
