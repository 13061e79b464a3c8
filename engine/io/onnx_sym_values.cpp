// Elements of the small integer tensors that shape chains compute (see onnx_sym_infer.h):
// Shape, Gather, Slice, Concat, Unsqueeze, arithmetic, Equal, Where ... over SymDims.
#include <algorithm>

#include "io/onnx_sym_infer.h"

namespace graphfuse::onnx_io::sym {

namespace {

std::int64_t attr_int(const Node& n, const char* name, std::int64_t dflt) {
  const auto* v = n.attrs.get_if<std::int64_t>(name);
  return v ? *v : dflt;
}

// A bound or index that may be negative (counted from the end of `size`), clamped into
// [0, size] as Slice does.
std::int64_t clamp_bound(std::int64_t b, std::int64_t size) {
  if (b < 0) b += size;
  return std::clamp<std::int64_t>(b, 0, size);
}

// Elementwise op over two element lists that broadcast (equal sizes, or one of them one
// element: shape chains only combine scalars and vectors).
template <class F>
std::optional<Elems> binary(const std::optional<Elems>& a, const std::optional<Elems>& b, F f) {
  if (!a || !b) return std::nullopt;
  std::size_t n = std::max(a->size(), b->size());
  if (a->size() != n && a->size() != 1) return std::nullopt;
  if (b->size() != n && b->size() != 1) return std::nullopt;
  Elems out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Dim& x = (*a)[a->size() == 1 ? 0 : i];
    const Dim& y = (*b)[b->size() == 1 ? 0 : i];
    out.push_back(x && y ? f(*x, *y) : std::nullopt);
  }
  return out;
}

// ONNX integer Div truncates toward zero; for numbers that is computed, for expressions
// only an exact division is (sizes are non-negative, so it is also the floor).
Dim divide(const SymDim& a, const SymDim& b) {
  if (b.is_number() && b.value() == 0) return std::nullopt;
  if (a.is_number() && b.is_number()) {
    if (a.value() == INT64_MIN && b.value() == -1) return std::nullopt;
    return SymDim::number(a.value() / b.value());
  }
  return div_exact(a, b);
}

// The symbols of shape values come from dims, which are never negative: an expression
// whose coefficients are all >= 0 is >= 0, and > 0 when its constant is.
bool nonneg(const SymDim& d) {
  for (const SymDim::Term& t : d.terms())
    if (t.coef < 0) return false;
  return true;
}
bool positive(const SymDim& d) {
  return nonneg(d) && !d.terms().empty() && d.terms().back().syms.empty() && d.terms().back().coef > 0;
}

// The sign of a - b when the expressions decide it: -1, 0, 1; or 2 for ">= 0", -2 for "<= 0".
std::optional<int> compare(const SymDim& a, const SymDim& b) {
  auto d = sub(a, b);
  if (!d) return std::nullopt;
  if (d->is_number()) return d->value() < 0 ? -1 : d->value() > 0 ? 1 : 0;
  auto m = sub(SymDim{}, *d);
  if (positive(*d)) return 1;
  if (m && positive(*m)) return -1;
  if (nonneg(*d)) return 2;
  if (m && nonneg(*m)) return -2;
  return std::nullopt;
}

// 1 / 0 when a and b are certainly equal / different, unknown otherwise (`Equal(batch, -1)`
// in torch's expand idiom is 0: a dim is never -1).
Dim equal(const SymDim& a, const SymDim& b) {
  auto c = compare(a, b);
  if (!c || *c == 2 || *c == -2) return std::nullopt;
  return SymDim::number(*c == 0 ? 1 : 0);
}

Dim compare_less(const SymDim& a, const SymDim& b) {
  auto c = compare(a, b);
  if (!c) return std::nullopt;
  if (*c == -1) return SymDim::number(1);
  if (*c >= 0) return SymDim::number(0);
  return std::nullopt;  // <= 0: equal or less
}

Dim pick(const SymDim& a, const SymDim& b, bool max) {
  auto c = compare(a, b);
  if (!c) return std::nullopt;
  return (*c >= 0) == max ? a : b;
}

}  // namespace

std::optional<Elems> infer_elems(Context& c, ValueRef v) {
  const Graph& g = c.graph();
  const Node& n = g.node(v.node);
  const std::string_view op = n.op.name();
  auto in = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : ValueRef{}; };
  auto el = [&](std::size_t i) -> std::optional<Elems> { return c.elems(in(i)); };
  if (v.port != 0 && op != "Split") return std::nullopt;

  if (op == "Shape") {
    Shape s = c.shape(in(0));
    if (!s.known) return std::nullopt;
    const auto r = static_cast<std::int64_t>(s.dims.size());
    std::int64_t b = clamp_bound(attr_int(n, "start", 0), r);
    std::int64_t e = clamp_bound(attr_int(n, "end", r), r);
    if (e <= b) return Elems{};
    return Elems(s.dims.begin() + b, s.dims.begin() + e);
  }
  if (op == "Size") {
    Shape s = c.shape(in(0));
    if (!s.known) return std::nullopt;
    Dim p = SymDim::number(1);
    for (const Dim& d : s.dims) p = p && d ? mul(*p, *d) : std::nullopt;
    return Elems{p};
  }
  // Ops that keep the elements and change only the shape (or the integer type).
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Identity" || op == "Flatten" ||
      op == "Cast")
    return el(0);
  if (op == "Gather") {
    auto data = el(0);
    auto idx = c.ints(in(1));
    Shape ds = c.shape(in(0));
    if (!data || !idx || !ds.known || ds.dims.size() != 1 || attr_int(n, "axis", 0) != 0) return std::nullopt;
    const auto size = static_cast<std::int64_t>(data->size());
    Elems out;
    for (std::int64_t i : *idx) {
      if (i < 0) i += size;
      if (i < 0 || i >= size) return std::nullopt;
      out.push_back((*data)[static_cast<std::size_t>(i)]);
    }
    return out;
  }
  if (op == "Slice") {
    auto data = el(0);
    Shape ds = c.shape(in(0));
    if (!data || !ds.known || ds.dims.size() != 1) return std::nullopt;
    std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
    if (c.opset() < 10) {
      if (const auto* s = n.attrs.get_if<std::vector<std::int64_t>>("starts")) starts = *s;
      if (const auto* e = n.attrs.get_if<std::vector<std::int64_t>>("ends")) ends = *e;
      if (const auto* a = n.attrs.get_if<std::vector<std::int64_t>>("axes")) axes = *a;
    } else {
      starts = c.ints(in(1));
      ends = c.ints(in(2));
      if (in(3).valid()) axes = c.ints(in(3));
      if (in(4).valid()) steps = c.ints(in(4));
      if ((in(3).valid() && !axes) || (in(4).valid() && !steps)) return std::nullopt;
    }
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (axes && (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) return std::nullopt;
    const std::int64_t step = steps && !steps->empty() ? (*steps)[0] : 1;
    const auto size = static_cast<std::int64_t>(data->size());
    Elems out;
    if (step == 1) {
      std::int64_t b = clamp_bound((*starts)[0], size), e = clamp_bound((*ends)[0], size);
      for (std::int64_t i = b; i < e; ++i) out.push_back((*data)[static_cast<std::size_t>(i)]);
    } else if (step == -1) {
      std::int64_t b = (*starts)[0] < 0 ? (*starts)[0] + size : std::min((*starts)[0], size - 1);
      std::int64_t e = (*ends)[0] < 0 ? std::max<std::int64_t>((*ends)[0] + size, -1) : std::min((*ends)[0], size - 1);
      for (std::int64_t i = b; i > e && i >= 0; --i) out.push_back((*data)[static_cast<std::size_t>(i)]);
    } else {
      return std::nullopt;
    }
    return out;
  }
  if (op == "Concat") {
    Elems out;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      auto e = el(i);
      if (!e) return std::nullopt;
      out.insert(out.end(), e->begin(), e->end());
    }
    return out;
  }
  if (op == "Add") return binary(el(0), el(1), [](const SymDim& a, const SymDim& b) { return add(a, b); });
  if (op == "Sub") return binary(el(0), el(1), [](const SymDim& a, const SymDim& b) { return sub(a, b); });
  if (op == "Mul") return binary(el(0), el(1), [](const SymDim& a, const SymDim& b) { return mul(a, b); });
  if (op == "Div") return binary(el(0), el(1), divide);
  if (op == "Equal") return binary(el(0), el(1), equal);
  if (op == "Less") return binary(el(0), el(1), compare_less);
  if (op == "Greater") return binary(el(1), el(0), compare_less);
  if (op == "Max" || op == "Min") {
    if (n.inputs.empty()) return std::nullopt;
    auto acc = el(0);
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      acc = binary(acc, el(i), [&](const SymDim& a, const SymDim& b) { return pick(a, b, op == "Max"); });
    return acc;
  }
  if (op == "Neg") {
    auto e = el(0);
    if (!e) return std::nullopt;
    for (Dim& d : *e) d = d ? sub(SymDim{}, *d) : std::nullopt;
    return e;
  }
  if (op == "Not") {
    auto e = c.ints(in(0));
    if (!e) return std::nullopt;
    Elems out;
    for (auto x : *e) out.emplace_back(SymDim::number(x == 0 ? 1 : 0));
    return out;
  }
  if (op == "Where") {
    auto cond = c.ints(in(0));
    auto x = el(1), y = el(2);
    if (!cond || !x || !y) return std::nullopt;
    std::size_t size = std::max({cond->size(), x->size(), y->size()});
    for (std::size_t s : {cond->size(), x->size(), y->size()})
      if (s != size && s != 1) return std::nullopt;
    Elems out;
    for (std::size_t i = 0; i < size; ++i) {
      bool take_x = (*cond)[cond->size() == 1 ? 0 : i] != 0;
      const Elems& from = take_x ? *x : *y;
      out.push_back(from[from.size() == 1 ? 0 : i]);
    }
    return out;
  }
  if (op == "ConstantOfShape") {
    auto shape = c.ints(in(0));
    if (!shape) return std::nullopt;
    std::int64_t count = 1;
    for (auto d : *shape) {
      if (d < 0 || d > 64) return std::nullopt;
      count *= d;
      if (count > 64) return std::nullopt;
    }
    std::int64_t value = 0;
    if (const Tensor* t = n.attrs.get_if<Tensor>("value")) {
      if (!t->has_data() || t->num_elements() != 1) return std::nullopt;
      auto x = t->dtype == DType::Int64 ? std::optional<std::int64_t>(*t->as<std::int64_t>()) : std::nullopt;
      if (t->dtype == DType::Int32) x = *t->as<std::int32_t>();
      if (!x) return std::nullopt;
      value = *x;
    }
    return Elems(static_cast<std::size_t>(count), SymDim::number(value));
  }
  if (op == "Range") {
    auto s = c.ints(in(0)), l = c.ints(in(1)), d = c.ints(in(2));
    if (!s || !l || !d || s->size() != 1 || l->size() != 1 || d->size() != 1 || (*d)[0] == 0) return std::nullopt;
    Elems out;
    for (std::int64_t x = (*s)[0]; ((*d)[0] > 0 ? x < (*l)[0] : x > (*l)[0]) && out.size() < 64; x += (*d)[0])
      out.emplace_back(SymDim::number(x));
    return out;
  }
  return std::nullopt;
}

}  // namespace graphfuse::onnx_io::sym
