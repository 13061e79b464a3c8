// Constraint and rewrite expressions: builtins over attributes, value types and constants.
#include "match/eval.h"

#include <cmath>
#include <cstring>

#include "match/arith.h"
#include "match/attr_compare.h"
#include "match/attr_lists.h"
#include "graph/const_facts.h"
#include "match/embedding_values.h"
#include "match/qdq_builtins.h"
#include "shape/sym_dim.h"
#include "match/eval_tensor.h"

namespace graphfuse::match {

namespace {

class Evaluator {
 public:
  Evaluator(const Graph& g, const Embedding& e, const MatchProgram& p) : g_(g), e_(e), p_(p) {}

  ValueRef value(const Term& t) const {
    if (t.of_node) return ValueRef{e_.nodes[t.reg], t.port};
    return e_.values[t.reg];
  }

  std::optional<AttrValue> eval(const Term& t) const {
    switch (t.kind) {
      case Term::Kind::Literal: return t.literal;
      case Term::Kind::Attr: {
        const AttrValue* a = g_.node(e_.nodes[t.reg]).attrs.find(t.key);
        if (!a) return std::nullopt;
        return *a;
      }
      case Term::Kind::OpType: return std::string(g_.node(e_.nodes[t.reg]).op.name());
      case Term::Kind::Value:
      case Term::Kind::Variadic: return std::nullopt;  // only meaningful as function arguments
      case Term::Kind::List: {
        std::vector<AttrValue> items;
        for (const Term& a : t.args) {
          auto v = eval(a);
          if (!v) return std::nullopt;
          items.push_back(std::move(*v));
        }
        return make_list(items);
      }
      case Term::Kind::Func: return call(t);
    }
    return std::nullopt;
  }

 private:
  std::optional<AttrValue> call(const Term& t) const {
    const std::vector<Term>& a = t.args;
    switch (t.fn) {
      case Fn::Const: return is_constant(g_, value(a[0]));
      case Fn::Has: return g_.node(e_.nodes[a[0].reg]).attrs.has(a[0].key);
      case Fn::Absent: return !g_.node(e_.nodes[a[0].reg]).attrs.has(a[0].key);
      case Fn::Rank: {
        ValueType vt = known_type(g_, value(a[0]));
        if (!vt.shape_known) return std::nullopt;
        return static_cast<std::int64_t>(vt.shape.size());
      }
      case Fn::DType: {
        ValueType vt = known_type(g_, value(a[0]));
        if (vt.dtype == DType::Undefined) return std::nullopt;
        return std::string(dtype_name(vt.dtype));
      }
      case Fn::Shape: {
        ValueType vt = known_type(g_, value(a[0]));
        if (!vt.shape_known) return std::nullopt;
        return vt.shape;
      }
      case Fn::Dim: {
        ValueType vt = known_type(g_, value(a[0]));
        auto k = eval(a[1]);
        auto* i = k ? std::get_if<std::int64_t>(&*k) : nullptr;
        if (!vt.shape_known || !i) return std::nullopt;
        std::int64_t r = static_cast<std::int64_t>(vt.shape.size()), idx = *i < 0 ? *i + r : *i;
        if (idx < 0 || idx >= r || vt.shape[static_cast<std::size_t>(idx)] < 0) return std::nullopt;
        return vt.shape[static_cast<std::size_t>(idx)];
      }
      case Fn::Value: {
        auto c = const_data(g_, value(a[0]));
        if (!c || c->size() != 1) return std::nullopt;
        if (c->is_int) return c->ints[0];
        return static_cast<float>(c->floats[0]);
      }
      case Fn::Values: {
        auto c = const_data(g_, value(a[0]));
        if (!c) return std::nullopt;
        if (c->is_int) return c->ints;
        return std::vector<float>(c->floats.begin(), c->floats.end());
      }
      case Fn::Len: {
        if (a[0].kind == Term::Kind::Variadic)
          return static_cast<std::int64_t>(variadic_values(g_, e_, p_, a[0].reg).size());
        auto v = eval(a[0]);
        if (!v) return std::nullopt;
        return static_cast<std::int64_t>(list_size(*v));
      }
      case Fn::Compose: {
        auto p = as_ints(eval(a[0])), q = as_ints(eval(a[1]));
        if (!p || !q) return std::nullopt;
        std::vector<std::int64_t> r;
        for (std::int64_t i : *q) {
          if (i < 0 || i >= static_cast<std::int64_t>(p->size())) return std::nullopt;
          r.push_back((*p)[static_cast<std::size_t>(i)]);
        }
        return r;
      }
      case Fn::Range: {
        auto n = eval(a[0]);
        auto* i = n ? std::get_if<std::int64_t>(&*n) : nullptr;
        if (!i || *i < 0 || *i > (1 << 20)) return std::nullopt;
        std::vector<std::int64_t> r;
        for (std::int64_t k = 0; k < *i; ++k) r.push_back(k);
        return r;
      }
      case Fn::Contains: {
        auto l = eval(a[0]), x = eval(a[1]);
        if (!l || !x) return std::nullopt;
        return attr_compare(*x, Cmp::In, *l);
      }
      case Fn::Uses: {
        if (a[0].kind == Term::Kind::Value && a[0].of_node && a[0].port == 0)
          return static_cast<std::int64_t>(g_.use_count(e_.nodes[a[0].reg]));
        return static_cast<std::int64_t>(g_.use_count(value(a[0])));
      }
      case Fn::AsTensor: {
        // Numbers -> a constant tensor (int64 or float32; lists 1-D, scalars 0-D), for
        // rewrites that create Const inputs from computed values.
        auto v = eval(a[0]);
        if (!v) return std::nullopt;
        if (auto* i = std::get_if<std::int64_t>(&*v)) return Tensor::from_ints({}, {*i});
        if (auto* f = std::get_if<float>(&*v)) return Tensor::from_floats({}, {*f});
        if (auto* is = std::get_if<std::vector<std::int64_t>>(&*v))
          return Tensor::from_ints({static_cast<std::int64_t>(is->size())}, *is);
        if (auto* fs = std::get_if<std::vector<float>>(&*v))
          return Tensor::from_floats({static_cast<std::int64_t>(fs->size())}, *fs);
        return std::nullopt;
      }
      case Fn::Default: {
        // `default(n.attr, v)`: the attribute when present, else v (an op's default).
        if (auto v = eval(a[0])) return v;
        return eval(a[1]);
      }
      case Fn::Opset: {
        auto d = eval(a[0]);
        const auto* domain = d ? std::get_if<std::string>(&*d) : nullptr;
        if (!domain) return std::nullopt;
        return opset_import(g_, *domain);
      }
      case Fn::Inverse: {
        // The inverse permutation: inverse(p)[p[i]] = i; nullopt unless p is a permutation.
        auto p = as_ints(eval(a[0]));
        if (!p) return std::nullopt;
        std::vector<std::int64_t> r(p->size(), -1);
        for (std::size_t i = 0; i < p->size(); ++i) {
          std::int64_t k = (*p)[i];
          if (k < 0 || k >= static_cast<std::int64_t>(p->size()) || r[static_cast<std::size_t>(k)] >= 0) return std::nullopt;
          r[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(i);
        }
        return r;
      }
      case Fn::At: {
        // Element i of a list (negative i counts from the end): perm[axis] is at(perm, axis).
        auto l = eval(a[0]), k = eval(a[1]);
        auto* i = k ? std::get_if<std::int64_t>(&*k) : nullptr;
        if (!l || !i) return std::nullopt;
        return list_at(*l, *i);
      }
      case Fn::Concat: {
        auto l = eval(a[0]), r = eval(a[1]);
        if (!l || !r) return std::nullopt;
        return list_concat(*l, *r);
      }
      case Fn::Repeat: {
        auto v = eval(a[0]), k = eval(a[1]);
        auto* n = k ? std::get_if<std::int64_t>(&*k) : nullptr;
        if (!v || !n || *n < 0 || *n > (1 << 20)) return std::nullopt;
        if (std::holds_alternative<std::int64_t>(*v)) return std::vector<std::int64_t>(static_cast<std::size_t>(*n), std::get<std::int64_t>(*v));
        if (std::holds_alternative<float>(*v)) return std::vector<float>(static_cast<std::size_t>(*n), std::get<float>(*v));
        if (std::holds_alternative<std::string>(*v)) return std::vector<std::string>(static_cast<std::size_t>(*n), std::get<std::string>(*v));
        if (std::holds_alternative<bool>(*v)) return std::vector<bool>(static_cast<std::size_t>(*n), std::get<bool>(*v));
        return std::nullopt;
      }
      case Fn::Add:
      case Fn::Sub:
      case Fn::Mul:
      case Fn::Div:
      case Fn::Mod: {
        auto l = eval(a[0]), r = eval(a[1]);
        if (!l || !r) return std::nullopt;
        ArithOp op = t.fn == Fn::Add ? ArithOp::Add
                     : t.fn == Fn::Sub ? ArithOp::Sub
                     : t.fn == Fn::Mul ? ArithOp::Mul
                     : t.fn == Fn::Div ? ArithOp::Div
                                       : ArithOp::Mod;
        return arith(op, *l, *r);
      }
      case Fn::Neg: {
        auto v = eval(a[0]);
        if (!v) return std::nullopt;
        return negate(*v);
      }
      case Fn::Compare: {
        if (auto sym = symbolic_compare(a[0], t.cmp, a[1])) return *sym;
        auto l = eval(a[0]), r = eval(a[1]);
        if (!l || !r) return std::nullopt;
        return attr_compare(*l, t.cmp, *r);
      }
      // Three-valued logic: an unknown operand leaves the result unknown unless the
      // other one decides it (`true || unknown` is true, `false && unknown` is false).
      case Fn::Not: {
        auto v = boolean(a[0]);
        if (!v) return std::nullopt;
        return !*v;
      }
      case Fn::Or:
      case Fn::And: {
        const bool decides = t.fn == Fn::Or;  // the value that settles it alone
        auto l = boolean(a[0]);
        if (l && *l == decides) return decides;
        auto r = boolean(a[1]);
        if (r && *r == decides) return decides;
        if (!l || !r) return std::nullopt;
        return !decides;
      }
      case Fn::SameShape: return same_shape(known_type(g_, value(a[0])), known_type(g_, value(a[1])));
      case Fn::InQdqUnit: return in_qdq_unit(g_, value(a[0]));
      case Fn::FeedsQuantize: return feeds_quantize(g_, value(a[0]));
      case Fn::Feeds: {
        auto op = eval(a[1]);
        const auto* name = op ? std::get_if<std::string>(&*op) : nullptr;
        if (!name) return std::nullopt;
        return feeds(g_, value(a[0]), *name);
      }
      case Fn::Producer: {
        // The op of the node that computes the value ("Sub", "com.microsoft.Gelu"; graph
        // inputs "Input", constants "Const" or "Constant"): lets a rule tell a centred value
        // (Sub) from a raw one without matching the producer as a pattern node.
        const ValueRef v = value(a[0]);
        if (!v.valid() || !g_.alive(v.node)) return std::nullopt;
        return std::string(g_.op(v.node).name());
      }
      case Fn::Native: return native(t);
      case Fn::Slice: {
        auto ax = eval(a[1]), lo = eval(a[2]), hi = eval(a[3]);
        const auto* x = ax ? std::get_if<std::int64_t>(&*ax) : nullptr;
        const auto* l = lo ? std::get_if<std::int64_t>(&*lo) : nullptr;
        const auto* h = hi ? std::get_if<std::int64_t>(&*hi) : nullptr;
        if (!x || !l || !h) return std::nullopt;
        std::int64_t step = 1;
        if (a.size() > 4) {
          auto st = eval(a[4]);
          const auto* sp = st ? std::get_if<std::int64_t>(&*st) : nullptr;
          if (!sp) return std::nullopt;
          step = *sp;
        }
        return slice_constant(g_, value(a[0]), *x, *l, *h, step);
      }
      case Fn::Join: {
        auto ax = eval(a[0]);
        const auto* x = ax ? std::get_if<std::int64_t>(&*ax) : nullptr;
        if (!x) return std::nullopt;
        return join_constants(g_, {value(a[1]), value(a[2]), value(a[3])}, *x);
      }
      case Fn::LowerTriangular: return lower_triangular(g_, value(a[0]));
      case Fn::MaxValue: return max_value(g_, value(a[0]));
    }
    return std::nullopt;
  }

  // The dimension `dim(x, k)` names when it is an expression over symbols (a dynamic axis
  // such as `seq`, or one computed from it), nullopt when it is a number or unknown.
  std::optional<shape::SymDim> symbolic_dim(const Term& t) const {
    if (t.kind != Term::Kind::Func || t.fn != Fn::Dim) return std::nullopt;
    ValueType vt = known_type(g_, value(t.args[0]));
    auto k = eval(t.args[1]);
    auto* i = k ? std::get_if<std::int64_t>(&*k) : nullptr;
    if (!vt.shape_known || !i) return std::nullopt;
    const auto r = static_cast<std::int64_t>(vt.shape.size());
    const std::int64_t idx = *i < 0 ? *i + r : *i;
    if (idx < 0 || idx >= r || vt.shape[static_cast<std::size_t>(idx)] >= 0) return std::nullopt;
    const auto u = static_cast<std::size_t>(idx);
    if (u >= vt.dim_params.size() || vt.dim_params[u].empty()) return std::nullopt;
    return shape::SymDim::parse(vt.dim_params[u]);
  }

 public:
  // A comparison with a symbolic `dim(...)` on either side, decided on the expressions:
  // `dim(a, -1) == dim(b, 0)` holds when both are `seq`; `seq` against `seq + 1` differs by
  // a number and is decided by it; anything else (`seq` against `past`, or against 64) is
  // unknown. nullopt: not such a comparison, or unknown (the caller's evaluation of the
  // plain values then finds the unknown dim and gives unknown too).
  std::optional<bool> symbolic_compare(const Term& lt, Cmp cmp, const Term& rt) const {
    auto l = symbolic_dim(lt), r = symbolic_dim(rt);
    if (!l && !r) return std::nullopt;
    auto operand = [&](const Term& t, std::optional<shape::SymDim>& d) {
      if (d) return true;
      auto v = eval(t);
      auto* i = v ? std::get_if<std::int64_t>(&*v) : nullptr;
      if (i) d = shape::SymDim::number(*i);
      return i != nullptr;
    };
    if (!operand(lt, l) || !operand(rt, r)) return std::nullopt;
    auto diff = difference(*l, *r);
    if (!diff) return std::nullopt;
    switch (cmp) {
      case Cmp::Eq: return *diff == 0;
      case Cmp::Ne: return *diff != 0;
      case Cmp::Lt: return *diff < 0;
      case Cmp::Le: return *diff <= 0;
      case Cmp::Gt: return *diff > 0;
      case Cmp::Ge: return *diff >= 0;
      default: return std::nullopt;
    }
  }

 private:
  std::optional<bool> boolean(const Term& t) const {
    auto v = eval(t);
    const bool* b = v ? std::get_if<bool>(&*v) : nullptr;
    if (!b) return std::nullopt;
    return *b;
  }

  // Equal shapes, proven: same rank and, dim by dim, the same number, or both unknown but
  // named by the same symbol (ONNX dim_param). Unknown dims without a shared name could
  // differ (one of them 1: a broadcast), so they prove nothing.
  static std::optional<AttrValue> same_shape(const ValueType& a, const ValueType& b) {
    if (!a.shape_known || !b.shape_known) return std::nullopt;
    if (a.shape.size() != b.shape.size()) return false;
    for (std::size_t i = 0; i < a.shape.size(); ++i) {
      if (a.shape[i] >= 0 && b.shape[i] >= 0) {
        if (a.shape[i] != b.shape[i]) return false;
        continue;
      }
      const std::string* pa = i < a.dim_params.size() && !a.dim_params[i].empty() ? &a.dim_params[i] : nullptr;
      const std::string* pb = i < b.dim_params.size() && !b.dim_params[i].empty() ? &b.dim_params[i] : nullptr;
      if (!pa || !pb) return std::nullopt;
      // Symbolic dims (docs/shapes.md) are equal when their canonical forms are: the file's
      // `seq+past` and an inferred `past + seq` are one dimension.
      if (*pa != *pb && shape::SymDim::parse(*pa) != shape::SymDim::parse(*pb)) return std::nullopt;
    }
    return true;
  }

  // The version of `domain` the graph imports (ONNX importer: the properties
  // onnx.opset_domains / onnx.opset_versions; "" and "ai.onnx" both name ONNX's own
  // domain), or 0 when the graph imports none: a graph from another format has no opsets.
  static std::int64_t opset_import(const Graph& g, std::string_view domain) {
    auto canonical = [](std::string_view d) { return d == "ai.onnx" ? std::string_view{} : d; };
    const auto* domains = g.properties().get_if<std::vector<std::string>>("onnx.opset_domains");
    const auto* versions = g.properties().get_if<std::vector<std::int64_t>>("onnx.opset_versions");
    if (!domains || !versions) return 0;
    for (std::size_t i = 0; i < domains->size() && i < versions->size(); ++i)
      if (canonical((*domains)[i]) == canonical(domain)) return (*versions)[i];
    return 0;
  }

  std::optional<AttrValue> native(const Term& t) const {
    std::vector<NativeArg> args;
    for (const Term& a : t.args) {
      NativeArg n;
      if (a.kind == Term::Kind::Value) {
        n.value = value(a);
        if (a.of_node) n.node = e_.nodes[a.reg];
      } else if (a.kind == Term::Kind::Variadic) {
        n.values = variadic_values(g_, e_, p_, a.reg);
      } else {
        n.literal = eval(a);
        if (!n.literal) return std::nullopt;
      }
      args.push_back(std::move(n));
    }
    return (*t.native)(g_, args);
  }

  const Graph& g_;
  const Embedding& e_;
  const MatchProgram& p_;
};

}  // namespace

std::optional<AttrValue> eval_term(const Term& t, const Graph& g, const Embedding& e, const MatchProgram& p) {
  return Evaluator(g, e, p).eval(t);
}

bool eval_check(const ExprCheck& c, const Graph& g, const Embedding& e, const MatchProgram& p) {
  Evaluator ev(g, e, p);
  if (c.mode == ExprCheck::Mode::Compare)
    if (auto sym = ev.symbolic_compare(c.lhs, c.cmp, c.rhs)) return *sym != c.negated;
  auto l = ev.eval(c.lhs);
  if (!l) return false;
  switch (c.mode) {
    case ExprCheck::Mode::Defined: return true;
    case ExprCheck::Mode::Predicate: {
      const bool* b = std::get_if<bool>(&*l);
      return b && (*b != c.negated);
    }
    case ExprCheck::Mode::Compare: {
      auto r = ev.eval(c.rhs);
      if (!r) return false;
      return attr_compare(*l, c.cmp, *r) != c.negated;
    }
  }
  return false;
}

}  // namespace graphfuse::match
