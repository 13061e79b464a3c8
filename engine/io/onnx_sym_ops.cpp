// Output shapes and element types per op for the symbolic shape pass (onnx_sym_infer.h):
// ONNX's own ops that exported transformers and CNNs use, and the com.microsoft ops that
// rules create. Each rule follows the op's specification; where a result depends on a
// run-time fact the rule cannot prove (a Slice bound within its axis), the assumption is
// that the model runs (see docs/shapes.md, "Limits").
#include <algorithm>
#include <array>

#include "io/onnx_convert.h"
#include "io/onnx_sym_infer.h"

namespace graphfuse::onnx_io::sym {

namespace {

// Bounds at or past this are "to the end" (exporters write INT64_MAX or INT32_MAX).
constexpr std::int64_t kToEnd = std::int64_t{1} << 30;
// Sizes, pads, strides and dilations a file may give beyond this leave a dim unknown: within
// it, output-size arithmetic cannot overflow.
constexpr std::int64_t kMaxWindowNumber = std::int64_t{1} << 31;

std::int64_t attr_int(const Node& n, const char* name, std::int64_t dflt) {
  const auto* v = n.attrs.get_if<std::int64_t>(name);
  return v ? *v : dflt;
}
const std::vector<std::int64_t>* attr_ints(const Node& n, const char* name) {
  return n.attrs.get_if<std::vector<std::int64_t>>(name);
}

Dim num(std::int64_t x) { return SymDim::number(x); }
bool is_num(const Dim& d, std::int64_t x) { return d && d->is_number() && d->value() == x; }

// One axis of a multidirectional broadcast. In a model that runs, two sizes either agree
// or one of them is 1, so a number other than 1 decides against an unknown or a symbol.
Dim broadcast_dim(const Dim& a, const Dim& b) {
  if (is_num(a, 1)) return b;
  if (is_num(b, 1)) return a;
  if (!a) return b && b->is_number() ? b : std::nullopt;
  if (!b) return a->is_number() ? a : std::nullopt;
  if (*a == *b) return a;
  if (a->is_number() && !b->is_number()) return a;
  if (b->is_number() && !a->is_number()) return b;
  return std::nullopt;  // two different symbols, or two different numbers (a broken model)
}

Shape broadcast(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) {
    if (!s.known) return {};
    rank = std::max(rank, s.dims.size());
  }
  std::vector<Dim> out(rank, num(1));
  for (const Shape& s : shapes)
    for (std::size_t i = 0; i < s.dims.size(); ++i) {
      std::size_t k = rank - s.dims.size() + i;
      out[k] = broadcast_dim(out[k], s.dims[i]);
    }
  return Shape::of(std::move(out));
}

Dim product(const std::vector<Dim>& dims, std::size_t b, std::size_t e) {
  Dim p = num(1);
  for (std::size_t i = b; i < e && p; ++i) p = dims[i] ? mul(*p, *dims[i]) : std::nullopt;
  return p;
}

// Normalized axis in [0, rank), or -1.
std::int64_t axis_in(std::int64_t a, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (a < 0) a += r;
  return a >= 0 && a < r ? a : -1;
}

// One axis of Slice: `dim` cut by [start, end) with `step`. Numbers are clamped as the
// specification says; a symbolic bound is taken to lie within the axis (the model slices
// a buffer to a length computed at run time, such as GPT-2's causal mask to the sequence).
Dim slice_dim(const Dim& dim, const Dim& start, const Dim& end, std::int64_t step) {
  if (!start || !end) return std::nullopt;
  if (dim && dim->is_number() && start->is_number() && end->is_number()) {
    const std::int64_t d = dim->value();
    std::int64_t s = start->value(), e = end->value();
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, d);
      e = std::clamp<std::int64_t>(e, 0, d);
      return num(e > s ? (e - s + step - 1) / step : 0);
    }
    s = std::clamp<std::int64_t>(s, -1, d - 1);
    e = std::clamp<std::int64_t>(e, -1, d - 1);
    return num(s > e ? (s - e - step - 1) / -step : 0);
  }
  if (step != 1) return std::nullopt;
  // Start: a number >= 0, a negative number counted from a known end, or an expression.
  Dim s = start;
  if (s->is_number() && s->value() < 0) s = dim ? add(*dim, *s) : std::nullopt;
  Dim e = end;
  if (e->is_number()) {
    if (e->value() >= kToEnd) e = dim;
    else if (e->value() < 0) e = dim ? add(*dim, *e) : std::nullopt;
    else if (!(dim && dim->is_number())) return std::nullopt;  // min(dim, e) is not known
  }
  if (!s || !e) return std::nullopt;
  if (s->is_number() && dim && dim->is_number() && s->value() > dim->value()) return num(0);
  return sub(*e, *s);
}

// numpy matmul shapes.
Shape matmul(Shape a, Shape b) {
  if (!a.known || !b.known || a.dims.empty() || b.dims.empty()) return {};
  bool a1 = a.dims.size() == 1, b1 = b.dims.size() == 1;
  if (a1) a.dims.insert(a.dims.begin(), num(1));
  if (b1) b.dims.push_back(num(1));
  Shape batch = broadcast({Shape::of({a.dims.begin(), a.dims.end() - 2}), Shape::of({b.dims.begin(), b.dims.end() - 2})});
  std::vector<Dim> out = batch.dims;
  if (!a1) out.push_back(a.dims[a.dims.size() - 2]);
  if (!b1) out.push_back(b.dims.back());
  return Shape::of(std::move(out));
}

Shape transpose_last2(Shape s, bool t) {
  if (t && s.known && s.dims.size() >= 2) std::swap(s.dims[s.dims.size() - 1], s.dims[s.dims.size() - 2]);
  return s;
}

// The axes a node names (attribute, or input `input` from opset `since`), nullopt when
// they are not known; an empty list when there are none.
std::optional<std::vector<std::int64_t>> axes_of(Context& c, const Node& n, std::size_t input, std::int64_t since,
                                                 const char* attr = "axes") {
  if (c.opset() >= since && input < n.inputs.size()) {
    if (!n.inputs[input].valid()) return std::vector<std::int64_t>{};
    return c.ints(n.inputs[input]);
  }
  if (const auto* a = attr_ints(n, attr)) return *a;
  return std::vector<std::int64_t>{};
}

// A window's numbers along one axis, each within [0, 2^31] (stride, dilation, kernel >= 1)
// so that the output-size arithmetic cannot overflow on sizes a file made up; nullopt
// otherwise.
struct Window {
  std::int64_t kernel, stride, dilation, pads;
};
std::optional<Window> window(std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pad_begin,
                             std::int64_t pad_end) {
  auto in = [&](std::int64_t v, std::int64_t lo) { return v >= lo && v <= kMaxWindowNumber; };
  if (!in(k, 1) || !in(s, 1) || !in(d, 1) || !in(pad_begin, 0) || !in(pad_end, 0)) return std::nullopt;
  return Window{k, s, d, pad_begin + pad_end};
}

// Conv output spatial sizes: computed for numbers, kept for a 1x1 stride-1 unpadded
// window on symbols, unknown otherwise.
Shape conv(const Node& n, const Shape& x, const Shape& w) {
  if (!x.known || x.dims.size() < 3 || (w.known && w.dims.size() != x.dims.size())) return {};
  const std::size_t sp = x.dims.size() - 2;
  std::vector<Dim> out{x.dims[0], w.known && !w.dims.empty() ? w.dims[0] : std::nullopt};
  const auto* ks = attr_ints(n, "kernel_shape");
  const auto* st = attr_ints(n, "strides");
  const auto* dl = attr_ints(n, "dilations");
  const auto* pd = attr_ints(n, "pads");
  const auto* ap = n.attrs.get_if<std::string>("auto_pad");
  const bool explicit_pads = !ap || *ap == "NOTSET";
  for (std::size_t i = 0; i < sp; ++i) {
    Dim k = ks && ks->size() == sp ? num((*ks)[i]) : (w.known && w.dims.size() == sp + 2 ? w.dims[i + 2] : std::nullopt);
    const bool padded = pd && pd->size() == 2 * sp;
    const Dim& in = x.dims[i + 2];
    const auto win = k && k->is_number()
                         ? window(k->value(), st && st->size() == sp ? (*st)[i] : 1, dl && dl->size() == sp ? (*dl)[i] : 1,
                                  padded ? (*pd)[i] : 0, padded ? (*pd)[i + sp] : 0)
                         : std::nullopt;
    if (!explicit_pads || !win || !in || (in->is_number() && (in->value() < 0 || in->value() > kMaxWindowNumber))) {
      out.emplace_back(std::nullopt);
      continue;
    }
    const std::int64_t eff = win->dilation * (win->kernel - 1) + 1;
    if (in->is_number()) out.push_back(num((in->value() + win->pads - eff) / win->stride + 1));
    else if (eff == 1 && win->stride == 1 && win->pads == 0) out.push_back(in);
    else out.emplace_back(std::nullopt);
  }
  return Shape::of(std::move(out));
}

// Pooling output spatial sizes (MaxPool, AveragePool, LpPool with explicit pads): the
// specification's floor((in + pads - ((k - 1) * dilation + 1)) / stride) + 1, ceil with
// ceil_mode; numbers only (symbols and auto_pad are left unknown).
Shape pool(const Node& n, const Shape& x) {
  const auto* ks = attr_ints(n, "kernel_shape");
  if (!x.known || x.dims.size() < 3 || !ks || ks->size() != x.dims.size() - 2) return {};
  const std::size_t sp = ks->size();
  const auto* st = attr_ints(n, "strides");
  const auto* dl = attr_ints(n, "dilations");
  const auto* pd = attr_ints(n, "pads");
  const auto* ap = n.attrs.get_if<std::string>("auto_pad");
  const bool ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  std::vector<Dim> out{x.dims[0], x.dims[1]};
  const bool padded = pd && pd->size() == 2 * sp;
  for (std::size_t i = 0; i < sp; ++i) {
    const auto win = window((*ks)[i], st && st->size() == sp ? (*st)[i] : 1, dl && dl->size() == sp ? (*dl)[i] : 1,
                            padded ? (*pd)[i] : 0, padded ? (*pd)[i + sp] : 0);
    const Dim& in = x.dims[i + 2];
    if ((ap && *ap != "NOTSET") || !win || !in || !in->is_number() || in->value() < 0 ||
        in->value() > kMaxWindowNumber) {
      out.emplace_back(std::nullopt);
      continue;
    }
    const std::int64_t s = win->stride;
    const std::int64_t span = in->value() + win->pads - (win->dilation * (win->kernel - 1) + 1);
    if (span < 0) {
      out.emplace_back(std::nullopt);  // a window larger than the padded input: invalid
      continue;
    }
    out.push_back(num((ceil_mode ? (span + s - 1) / s : span / s) + 1));
  }
  return Shape::of(std::move(out));
}

// An ONNX Constant node's type: its value tensor, or the scalar and list forms.
OutType constant_type(const Node& n) {
  if (const Tensor* t = n.attrs.get_if<Tensor>("value")) {
    std::vector<Dim> d;
    for (auto x : t->shape) d.push_back(num(x));
    return OutType{t->dtype, Shape::of(std::move(d))};
  }
  if (n.attrs.get_if<float>("value_float")) return OutType{DType::Float32, Shape::of({})};
  if (n.attrs.get_if<std::int64_t>("value_int")) return OutType{DType::Int64, Shape::of({})};
  if (const auto* v = n.attrs.get_if<std::vector<float>>("value_floats"))
    return OutType{DType::Float32, Shape::of({num(static_cast<std::int64_t>(v->size()))})};
  if (const auto* v = n.attrs.get_if<std::vector<std::int64_t>>("value_ints"))
    return OutType{DType::Int64, Shape::of({num(static_cast<std::int64_t>(v->size()))})};
  return {};
}

bool same_shape_op(std::string_view op) {
  static constexpr std::array<std::string_view, 44> kOps = {
      "Relu", "Neg", "Sqrt", "Erf", "Tanh", "Sigmoid", "Exp", "Log", "Abs", "Reciprocal", "Softmax",
      "LogSoftmax", "Not", "Identity", "Floor", "Ceil", "Sin", "Cos", "Clip", "LeakyRelu", "Gelu",
      "HardSigmoid", "HardSwish", "Round", "Sign", "Softplus", "Softsign", "Elu", "Selu", "Celu",
      "CumSum", "Trilu", "IsNaN", "IsInf", "Mish", "BatchNormalization", "InstanceNormalization",
      "LRN", "Dropout", "Cast", "CastLike", "Shrink", "ThresholdedRelu", "GroupNormalization"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool broadcast_op(std::string_view op) {
  static constexpr std::array<std::string_view, 20> kOps = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "PRelu"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

bool bool_op(std::string_view op) {
  static constexpr std::array<std::string_view, 10> kOps = {
      "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end() || op == "IsInf";
}

// com.microsoft ops whose first output has the shape and type of the first input (the
// activations and normalizations the transformer rules create).
bool ms_same_shape_op(std::string_view op) {
  static constexpr std::array<std::string_view, 12> kOps = {
      "FastGelu", "BiasGelu", "Gelu", "QuickGelu", "BiasAdd", "RotaryEmbedding", "SkipLayerNormalization",
      "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization", "BiasSoftmax", "BiasDropout",
      "LayerNormalization"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

std::vector<OutType> infer_ms(Context& c, const Node& n, std::string_view op, std::vector<OutType> out) {
  auto in = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : ValueRef{}; };
  const Shape x = c.shape(in(0));
  if (ms_same_shape_op(op)) {
    out[0].shape = x;
    // SkipLayerNormalization's 4th output is input + skip (+ bias): the input's shape too.
    if ((op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") && out.size() > 3)
      out[3] = OutType{out[0].dtype, x};
    return out;
  }
  if (op == "FusedMatMul") {
    out[0].shape = matmul(transpose_last2(x, attr_int(n, "transA", 0) != 0),
                          transpose_last2(c.shape(in(1)), attr_int(n, "transB", 0) != 0));
  } else if (op == "FusedConv") {
    out[0].shape = conv(n, x, c.shape(in(1)));
  } else if (op == "Attention") {
    // input [B, S, H_in], weights [H_in, Hq + Hk + Hv]: output [B, S, Hv].
    const Shape w = c.shape(in(1));
    if (!x.known || x.dims.size() != 3) return out;
    Dim hv;
    if (const auto* q = attr_ints(n, "qkv_hidden_sizes"); q && q->size() == 3) hv = num((*q)[2]);
    else if (w.known && w.dims.size() == 2 && w.dims[1]) hv = div_exact(*w.dims[1], SymDim::number(3));
    out[0].shape = Shape::of({x.dims[0], x.dims[1], hv});
  } else if (op == "MultiHeadAttention") {
    // query [B, S, D]; value [B, L, Dv] or [B, N, L, H]; without value (packed K/V) Dv = D.
    const Shape v = c.shape(in(2));
    if (!x.known || x.dims.size() != 3) return out;
    Dim dv = x.dims[2];
    if (in(2).valid()) {
      dv = std::nullopt;
      if (v.known && v.dims.size() == 3) dv = v.dims[2];
      if (v.known && v.dims.size() == 4 && v.dims[1] && v.dims[3]) dv = mul(*v.dims[1], *v.dims[3]);
    }
    out[0].shape = Shape::of({x.dims[0], x.dims[1], dv});
  } else if (op == "GroupQueryAttention") {
    // query [B, S, D]; packed QKV (no key) has D = (N + 2 Nkv) H and the output N H.
    if (!x.known || x.dims.size() != 3) return out;
    Dim d = x.dims[2];
    if (!in(1).valid() && d) {
      const std::int64_t heads = attr_int(n, "num_heads", 0), kv = attr_int(n, "kv_num_heads", 0);
      auto h = heads > 0 && kv > 0 ? div_exact(*d, SymDim::number(heads + 2 * kv)) : std::nullopt;
      d = h ? mul(*h, SymDim::number(heads)) : std::nullopt;
    }
    out[0].shape = Shape::of({x.dims[0], x.dims[1], d});
  } else if (op == "EmbedLayerNormalization") {
    // input_ids [B, S], word_embedding [V, H]: output [B, S, H] (the embedding's type),
    // mask_index [B] int32, embedding_sum like the output.
    const Shape we = c.shape(in(2));
    if (!x.known || x.dims.size() != 2) return out;
    Dim h = we.known && we.dims.size() == 2 ? we.dims[1] : std::nullopt;
    out[0] = OutType{c.dtype(in(2)), Shape::of({x.dims[0], x.dims[1], h})};
    if (out.size() > 1) out[1] = OutType{DType::Int32, Shape::of({x.dims[0]})};
    if (out.size() > 2) out[2] = out[0];
  }
  return out;
}

}  // namespace

std::vector<OutType> infer_node(Context& c, NodeId id) {
  const Graph& g = c.graph();
  const Node& n = g.node(id);
  std::vector<OutType> out(n.outputs.size());
  if (out.empty()) return out;
  const std::string_view domain = n.op.domain();
  const std::string_view op = n.op.local_name();
  auto in = [&](std::size_t i) { return i < n.inputs.size() ? n.inputs[i] : ValueRef{}; };
  if (domain != "com.microsoft" && !canonical_domain(domain).empty()) return out;  // unknown ops
  out[0].dtype = n.inputs.empty() ? DType::Undefined : c.dtype(in(0));
  if (domain == "com.microsoft") return infer_ms(c, n, op, std::move(out));
  if (op == "Constant") {
    out[0] = constant_type(n);
    return out;
  }

  const Shape x = c.shape(in(0));
  // Element types first: most ops keep their first input's.
  if (bool_op(op)) out[0].dtype = DType::Bool;
  else if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin") out[0].dtype = DType::Int64;
  else if (op == "Cast") out[0].dtype = static_cast<DType>(attr_int(n, "to", 0));
  else if (op == "CastLike" || op == "Where") out[0].dtype = c.dtype(in(1));
  else if (op == "ConstantOfShape") {
    const Tensor* t = n.attrs.get_if<Tensor>("value");
    out[0].dtype = t ? t->dtype : DType::Float32;
  }

  if (same_shape_op(op)) {
    out[0].shape = x;
    if (op == "Dropout" && out.size() > 1) out[1] = OutType{DType::Bool, x};
  } else if (broadcast_op(op) || op == "Where") {
    std::vector<Shape> shapes;
    for (ValueRef v : n.inputs) shapes.push_back(c.shape(v));
    out[0].shape = broadcast(shapes);
  } else if (op == "LayerNormalization" || op == "SimplifiedLayerNormalization") {
    out[0].shape = x;
    // Mean and inverse std dev: the normalized axes become 1.
    if (x.known) {
      Shape stat = x;
      const std::int64_t a = axis_in(attr_int(n, "axis", -1), x.dims.size());
      if (a >= 0)
        for (std::size_t i = static_cast<std::size_t>(a); i < stat.dims.size(); ++i) stat.dims[i] = num(1);
      const auto st = static_cast<DType>(attr_int(n, "stash_type", 1));
      for (std::size_t k = 1; k < out.size() && a >= 0; ++k) out[k] = OutType{st, stat};
    }
  } else if (op == "Shape") {
    if (x.known) {
      const auto r = static_cast<std::int64_t>(x.dims.size());
      auto bound = [&](std::int64_t b) { return std::clamp<std::int64_t>(b < 0 ? b + r : b, 0, r); };
      out[0].shape = Shape::of({num(std::max<std::int64_t>(0, bound(attr_int(n, "end", r)) - bound(attr_int(n, "start", 0))))});
    }
  } else if (op == "Size") {
    out[0].shape = Shape::of({});
  } else if (op == "Gather") {
    const Shape idx = c.shape(in(1));
    const std::int64_t a = x.known ? axis_in(attr_int(n, "axis", 0), x.dims.size()) : -1;
    if (a >= 0 && idx.known) {
      std::vector<Dim> d(x.dims.begin(), x.dims.begin() + a);
      d.insert(d.end(), idx.dims.begin(), idx.dims.end());
      d.insert(d.end(), x.dims.begin() + a + 1, x.dims.end());
      out[0].shape = Shape::of(std::move(d));
    }
  } else if (op == "GatherElements") {
    out[0].shape = c.shape(in(1));
  } else if (op == "Slice") {
    if (x.known) {
      std::optional<Elems> starts, ends;
      std::optional<std::vector<std::int64_t>> axes, steps;
      if (c.opset() < 10) {
        auto to_elems = [](const std::vector<std::int64_t>* v) -> std::optional<Elems> {
          if (!v) return std::nullopt;
          Elems e;
          for (auto i : *v) e.push_back(num(i));
          return e;
        };
        starts = to_elems(attr_ints(n, "starts"));
        ends = to_elems(attr_ints(n, "ends"));
        if (const auto* a = attr_ints(n, "axes")) axes = *a;
      } else {
        starts = c.elems(in(1));
        ends = c.elems(in(2));
        if (in(3).valid()) axes = c.ints(in(3));
        if (in(4).valid()) steps = c.ints(in(4));
      }
      const bool params = starts && ends && starts->size() == ends->size() &&
                          (!in(3).valid() || c.opset() < 10 || axes) && (!in(4).valid() || steps);
      Shape s = x;
      if (!params) {
        for (Dim& d : s.dims) d = std::nullopt;  // the rank is kept, the sizes are not known
      } else {
        for (std::size_t i = 0; i < starts->size(); ++i) {
          std::int64_t a = axes ? (i < axes->size() ? axis_in((*axes)[i], s.dims.size()) : -1)
                                : static_cast<std::int64_t>(i);
          std::int64_t step = steps ? (i < steps->size() ? (*steps)[i] : 0) : 1;
          if (a < 0 || a >= static_cast<std::int64_t>(s.dims.size()) || step == 0) return out;
          auto& d = s.dims[static_cast<std::size_t>(a)];
          d = slice_dim(x.dims[static_cast<std::size_t>(a)], (*starts)[i], (*ends)[i], step);
        }
      }
      out[0].shape = s;
    }
  } else if (op == "Concat") {
    std::vector<Shape> shapes;
    for (ValueRef v : n.inputs) shapes.push_back(c.shape(v));
    Shape s;
    for (const Shape& sh : shapes)
      if (sh.known) s = sh;
    const std::int64_t a = s.known ? axis_in(attr_int(n, "axis", 0), s.dims.size()) : -1;
    if (a >= 0) {
      Dim total = num(0);
      for (const Shape& sh : shapes) {
        if (!sh.known || sh.dims.size() != s.dims.size()) return out;
        const Dim& d = sh.dims[static_cast<std::size_t>(a)];
        total = total && d ? add(*total, *d) : std::nullopt;
        for (std::size_t i = 0; i < s.dims.size(); ++i)
          if (static_cast<std::int64_t>(i) != a) s.dims[i] = broadcast_dim(s.dims[i], sh.dims[i]);
      }
      s.dims[static_cast<std::size_t>(a)] = total;
      out[0].shape = s;
    }
  } else if (op == "Unsqueeze") {
    auto axes = axes_of(c, n, 1, 13);
    if (x.known && axes) {
      const std::size_t r = x.dims.size() + axes->size();
      std::vector<bool> ones(r, false);
      for (auto a : *axes) {
        auto k = axis_in(a, r);
        if (k < 0 || ones[static_cast<std::size_t>(k)]) return out;
        ones[static_cast<std::size_t>(k)] = true;
      }
      std::vector<Dim> d;
      std::size_t j = 0;
      for (std::size_t i = 0; i < r; ++i) d.push_back(ones[i] ? num(1) : x.dims[j++]);
      out[0].shape = Shape::of(std::move(d));
    }
  } else if (op == "Squeeze") {
    auto axes = axes_of(c, n, 1, 13);
    if (x.known && axes) {
      std::vector<bool> drop(x.dims.size(), false);
      if (axes->empty()) {
        for (std::size_t i = 0; i < x.dims.size(); ++i) {
          if (!x.dims[i] || !x.dims[i]->is_number()) return out;  // might be 1
          drop[i] = x.dims[i]->value() == 1;
        }
      }
      for (auto a : *axes) {
        auto k = axis_in(a, x.dims.size());
        if (k < 0) return out;
        drop[static_cast<std::size_t>(k)] = true;
      }
      std::vector<Dim> d;
      for (std::size_t i = 0; i < x.dims.size(); ++i)
        if (!drop[i]) d.push_back(x.dims[i]);
      out[0].shape = Shape::of(std::move(d));
    }
  } else if (op == "Reshape") {
    const auto& target = c.elems(in(1));
    const Shape ts = c.shape(in(1));
    const bool allowzero = attr_int(n, "allowzero", 0) != 0;
    if (target) {
      std::vector<Dim> d = *target;
      std::size_t minus = d.size();
      for (std::size_t i = 0; i < d.size(); ++i) {
        if (is_num(d[i], 0) && !allowzero) d[i] = x.known && i < x.dims.size() ? x.dims[i] : std::nullopt;
        else if (is_num(d[i], -1)) minus = i;
        else if (d[i] && d[i]->is_number() && d[i]->value() < -1) return out;
      }
      if (minus < d.size()) {
        Dim total = x.known ? product(x.dims, 0, x.dims.size()) : std::nullopt;
        d[minus] = std::nullopt;
        Dim rest = num(1);
        for (std::size_t i = 0; i < d.size() && rest; ++i)
          if (i != minus) rest = d[i] ? mul(*rest, *d[i]) : std::nullopt;
        if (total && rest && !is_num(rest, 0)) d[minus] = div_exact(*total, *rest);
      }
      out[0].shape = Shape::of(std::move(d));
    } else if (ts.known && ts.dims.size() == 1 && ts.dims[0] && ts.dims[0]->is_number()) {
      out[0].shape = Shape::of(std::vector<Dim>(static_cast<std::size_t>(ts.dims[0]->value())));
    }
  } else if (op == "Transpose") {
    if (x.known) {
      std::vector<std::int64_t> perm;
      if (const auto* p = attr_ints(n, "perm")) perm = *p;
      else
        for (std::size_t i = x.dims.size(); i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
      if (perm.size() != x.dims.size()) return out;
      std::vector<Dim> d;
      for (auto p : perm) {
        if (p < 0 || p >= static_cast<std::int64_t>(x.dims.size())) return out;
        d.push_back(x.dims[static_cast<std::size_t>(p)]);
      }
      out[0].shape = Shape::of(std::move(d));
    }
  } else if (op == "MatMul") {
    out[0].shape = matmul(x, c.shape(in(1)));
  } else if (op == "Gemm") {
    Shape a = transpose_last2(x, attr_int(n, "transA", 0) != 0);
    Shape b = transpose_last2(c.shape(in(1)), attr_int(n, "transB", 0) != 0);
    if (a.known && b.known && a.dims.size() == 2 && b.dims.size() == 2) out[0].shape = Shape::of({a.dims[0], b.dims[1]});
  } else if (op == "Expand") {
    const auto& target = c.elems(in(1));
    if (target) out[0].shape = broadcast({x, Shape::of(*target)});
  } else if (op == "ConstantOfShape") {
    if (const auto& target = c.elems(in(0))) out[0].shape = Shape::of(*target);
  } else if (op == "Range") {
    const auto &s = c.elems(in(0)), &l = c.elems(in(1));
    auto d = c.ints(in(2));
    if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 && (*s)[0] && (*l)[0] && (*d)[0] != 0) {
      Dim len;
      if ((*s)[0]->is_number() && (*l)[0]->is_number()) {
        const std::int64_t span = (*l)[0]->value() - (*s)[0]->value(), step = (*d)[0];
        len = num(std::max<std::int64_t>(0, (span + step + (step > 0 ? -1 : 1)) / step));
      } else if (auto span = sub(*(*l)[0], *(*s)[0])) {
        len = div_exact(*span, SymDim::number((*d)[0]));
      }
      out[0].shape = Shape::of({len});
    }
  } else if (op == "Split") {
    const std::int64_t a = x.known ? axis_in(attr_int(n, "axis", 0), x.dims.size()) : -1;
    if (a >= 0) {
      std::optional<std::vector<std::int64_t>> sizes;
      if (c.opset() >= 13 && in(1).valid()) sizes = c.ints(in(1));
      else if (const auto* s = attr_ints(n, "split")) sizes = *s;
      for (std::size_t k = 0; k < out.size(); ++k) {
        Shape s = x;
        Dim& d = s.dims[static_cast<std::size_t>(a)];
        if (sizes) d = k < sizes->size() ? num((*sizes)[k]) : std::nullopt;
        else if (!in(1).valid() && d) d = div_exact(*d, SymDim::number(static_cast<std::int64_t>(out.size())));
        else d = std::nullopt;
        out[k] = OutType{out[0].dtype, s};
      }
    }
  } else if (op == "Flatten") {
    const std::int64_t a = x.known ? attr_int(n, "axis", 1) : -1;
    const auto r = static_cast<std::int64_t>(x.dims.size());
    const std::int64_t k = a < 0 ? a + r : a;
    if (x.known && k >= 0 && k <= r)
      out[0].shape = Shape::of({product(x.dims, 0, static_cast<std::size_t>(k)),
                                product(x.dims, static_cast<std::size_t>(k), x.dims.size())});
  } else if (op.starts_with("Reduce") || op == "ArgMax" || op == "ArgMin") {
    const bool arg = op.starts_with("Arg");
    // ReduceSum takes its axes as an input from opset 13, the other reductions from 18.
    const std::int64_t since = op == "ReduceSum" ? 13 : 18;
    std::optional<std::vector<std::int64_t>> axes =
        arg ? std::vector<std::int64_t>{attr_int(n, "axis", 0)} : axes_of(c, n, 1, since);
    if (x.known && axes) {
      const bool keep = attr_int(n, "keepdims", 1) != 0;
      std::vector<bool> red(x.dims.size(), axes->empty() && attr_int(n, "noop_with_empty_axes", 0) == 0);
      for (auto a0 : *axes) {
        auto k = axis_in(a0, x.dims.size());
        if (k < 0) return out;
        red[static_cast<std::size_t>(k)] = true;
      }
      std::vector<Dim> d;
      for (std::size_t i = 0; i < x.dims.size(); ++i) {
        if (!red[i]) d.push_back(x.dims[i]);
        else if (keep) d.push_back(num(1));
      }
      out[0].shape = Shape::of(std::move(d));
    }
  } else if (op == "Conv") {
    out[0].shape = conv(n, x, c.shape(in(1)));
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    out[0].shape = pool(n, x);
    if (out.size() > 1) out[1] = OutType{DType::Int64, out[0].shape};  // MaxPool's Indices
  } else if (op == "Pad") {
    // Pads from opset 11 are an input (axes an input from 18), before that an attribute:
    // [begin of each axis..., end of each axis...], negative ones crop.
    std::optional<std::vector<std::int64_t>> pads;
    if (c.opset() >= 11) {
      if (in(1).valid()) pads = c.ints(in(1));
    } else if (const auto* p = attr_ints(n, "pads")) {
      pads = *p;
    }
    std::optional<std::vector<std::int64_t>> axes;
    if (x.known) {
      if (c.opset() >= 18 && in(3).valid()) {
        axes = c.ints(in(3));
      } else {
        axes.emplace();
        for (std::size_t i = 0; i < x.dims.size(); ++i) axes->push_back(static_cast<std::int64_t>(i));
      }
    }
    if (x.known && pads && axes && pads->size() == 2 * axes->size()) {
      Shape s = x;
      bool ok = true;
      for (std::size_t k = 0; k < axes->size() && ok; ++k) {
        const std::int64_t a = axis_in((*axes)[k], x.dims.size());
        const std::int64_t b = (*pads)[k], e = (*pads)[k + axes->size()];
        if (a < 0 || b < -kMaxWindowNumber || b > kMaxWindowNumber || e < -kMaxWindowNumber ||
            e > kMaxWindowNumber) {
          ok = false;
          break;
        }
        Dim& d = s.dims[static_cast<std::size_t>(a)];
        if (b == 0 && e == 0) continue;
        if (d && d->is_number()) d = d->value() + b + e >= 0 ? num(d->value() + b + e) : std::nullopt;
        else d = d ? add(*d, SymDim::number(b + e)) : std::nullopt;
      }
      if (ok) out[0].shape = s;
    }
  } else if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
    if (x.known && x.dims.size() >= 3) {
      Shape s = x;
      for (std::size_t i = 2; i < s.dims.size(); ++i) s.dims[i] = num(1);
      out[0].shape = s;
    }
  } else if (op == "Tile") {
    const auto& reps = c.elems(in(1));
    if (x.known && reps && reps->size() == x.dims.size()) {
      std::vector<Dim> d;
      for (std::size_t i = 0; i < x.dims.size(); ++i)
        d.push_back(x.dims[i] && (*reps)[i] ? mul(*x.dims[i], *(*reps)[i]) : std::nullopt);
      out[0].shape = Shape::of(std::move(d));
    }
  }
  return out;
}

}  // namespace graphfuse::onnx_io::sym
