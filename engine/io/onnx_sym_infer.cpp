// The symbolic shape pass (see onnx_sym_infer.h): facts, merging into value types, and the
// import and per-node drivers. The op rules are in onnx_sym_ops.cpp, element rules in
// onnx_sym_values.cpp.
#include "io/onnx_sym_infer.h"

#include <cstring>
#include <unordered_set>

#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"
#include "graph/const_facts.h"

namespace graphfuse::onnx_io::sym {

namespace {

// Shape chains compute tensors of a few elements (a shape, an index, a bound); anything
// larger is data, not a shape, and is not tracked.
constexpr std::int64_t kMaxElems = 64;
// Element computation recurses through producers only for created nodes (the import pass
// fills them in topological order); deeper chains than this are left unknown.
constexpr int kMaxDepth = 48;

std::uint64_t key(ValueRef v) { return (static_cast<std::uint64_t>(v.node) << 32) | v.port; }

bool int_type(DType t) {
  switch (t) {
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::Bool:
      return true;
    default:
      return false;
  }
}

bool fully_known(const ValueType& t) {
  if (t.dtype == DType::Undefined || !t.shape_known) return false;
  for (auto d : t.shape)
    if (d < 0) return false;
  return true;
}

bool untyped(const ValueType& t) { return t.dtype == DType::Undefined && !t.shape_known; }

// Folds `o` into `t`: what `t` knows stays (its numbers, its rank), what it lacks is taken
// from `o` (the dtype, an unknown rank, unknown or unnamed dims). A symbol libonnx made up
// for a dim it could not follow (`unk__3`) is replaced by the expression this pass derived.
bool merge(ValueType& t, const OutType& o) {
  bool changed = false;
  if (t.dtype == DType::Undefined && o.dtype != DType::Undefined) {
    t.dtype = o.dtype;
    changed = true;
  }
  if (!o.shape.known) return changed;
  if (!t.shape_known) {
    set_shape(t, o.shape);
    return true;
  }
  if (t.shape.size() != o.shape.dims.size()) return changed;  // disagreement: keep libonnx's
  Shape s = shape_of(t);
  bool better = false;
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    const Dim& mine = o.shape.dims[i];
    if (!mine || t.shape[i] >= 0) continue;
    const std::string* param = i < t.dim_params.size() && !t.dim_params[i].empty() ? &t.dim_params[i] : nullptr;
    if (param && !param->starts_with("unk__")) continue;  // a name libonnx carried through
    if (s.dims[i] == mine) continue;
    s.dims[i] = mine;
    better = true;
  }
  if (better) set_shape(t, s);
  return changed || better;
}

}  // namespace

Shape shape_of(const ValueType& t) {
  Shape s;
  if (!t.shape_known) return s;
  s.known = true;
  s.dims.reserve(t.shape.size());
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] >= 0) s.dims.emplace_back(SymDim::number(t.shape[i]));
    else if (i < t.dim_params.size() && !t.dim_params[i].empty()) s.dims.emplace_back(SymDim::parse(t.dim_params[i]));
    else s.dims.emplace_back(std::nullopt);
  }
  return s;
}

void set_shape(ValueType& t, const Shape& s) {
  t.shape_known = s.known;
  t.shape.clear();
  t.dim_params.clear();
  if (!s.known) return;
  bool any = false;
  std::vector<std::string> params;
  for (const Dim& d : s.dims) {
    if (d && d->is_number() && d->value() >= 0) {
      t.shape.push_back(d->value());
      params.emplace_back();
    } else if (d && !d->is_number()) {
      t.shape.push_back(-1);
      params.push_back(d->text());
      any = true;
    } else {
      t.shape.push_back(-1);  // unknown, or a negative number (a broken model): unknown
      params.emplace_back();
    }
  }
  if (any) t.dim_params = std::move(params);
}

Context::Context(const Graph& g) : g_(g), opset_(opset_version(g, "")) {}

DType Context::dtype(ValueRef v) const { return known_type(g_, v).dtype; }

Shape Context::shape(ValueRef v) const { return shape_of(known_type(g_, v)); }

const std::optional<Elems>& Context::elems(ValueRef v) {
  static const std::optional<Elems> kNone;
  if (!v.valid() || !g_.alive(v.node)) return kNone;
  auto it = elems_.find(key(v));
  if (it != elems_.end()) return it->second;
  if (depth_ >= kMaxDepth) return kNone;
  ++depth_;
  auto e = compute_elems(v);
  --depth_;
  return elems_.insert_or_assign(key(v), std::move(e)).first->second;
}

std::optional<std::vector<std::int64_t>> Context::ints(ValueRef v) {
  const auto& e = elems(v);
  if (!e) return std::nullopt;
  std::vector<std::int64_t> out;
  out.reserve(e->size());
  for (const Dim& d : *e) {
    if (!d || !d->is_number()) return std::nullopt;
    out.push_back(d->value());
  }
  return out;
}

std::optional<Elems> Context::compute_elems(ValueRef v) {
  const ValueType t = known_type(g_, v);
  if (!int_type(t.dtype) || !t.shape_known) return std::nullopt;
  std::int64_t count = 1;
  for (auto d : t.shape) {
    if (d < 0 || d > kMaxElems) return std::nullopt;
    count *= d;
    if (count > kMaxElems) return std::nullopt;
  }
  if (is_constant(g_, v)) {
    const Node& n = g_.node(v.node);
    if (const Tensor* c = constant_tensor(g_, v)) {
      if (!c->has_data() || c->num_elements() != count) return std::nullopt;
      Elems out;
      for (std::int64_t k = 0; k < count; ++k) {
        auto x = tensor_element(*c, k);
        if (!x) return std::nullopt;
        out.emplace_back(SymDim::number(static_cast<std::int64_t>(*x)));
      }
      // int64 values beyond 2^53 (INT64_MAX as an "until the end" bound) lose precision as
      // doubles: read int64 tensors exactly.
      if (c->dtype == DType::Int64)
        for (std::int64_t k = 0; k < count; ++k) {
          std::int64_t x;
          std::memcpy(&x, c->data->data() + k * 8, 8);
          out[static_cast<std::size_t>(k)] = SymDim::number(x);
        }
      return out;
    }
    if (const auto* i = n.attrs.get_if<std::int64_t>("value_int")) return Elems{SymDim::number(*i)};
    if (const auto* is = n.attrs.get_if<std::vector<std::int64_t>>("value_ints")) {
      Elems out;
      for (auto x : *is) out.emplace_back(SymDim::number(x));
      return out;
    }
    return std::nullopt;
  }
  auto e = infer_elems(*this, v);
  if (e && static_cast<std::int64_t>(e->size()) != count) return std::nullopt;
  return e;
}

std::size_t infer_graph(Graph& g) {
  if (opset_version(g, "") < 0) return 0;
  const std::string list_key(kInferredValues);
  std::unordered_set<std::string> inferred;
  std::vector<std::string> names;
  if (const auto* l = g.properties().get_if<std::vector<std::string>>(list_key)) {
    inferred.insert(l->begin(), l->end());
    names = *l;
  }
  Context c(g);
  std::size_t changed = 0;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op.name() == ops::kInput || n.op.name() == ops::kConst) continue;
    bool needed = false;
    for (const OutputInfo& o : n.outputs)
      if (!fully_known(o.type) && (untyped(o.type) || inferred.count(o.name))) needed = true;
    if (needed) {
      std::vector<OutType> outs = infer_node(c, id);
      for (std::size_t k = 0; k < outs.size() && k < n.outputs.size(); ++k) {
        ValueType& t = g.output_infos(id)[k].type;
        const ValueRef v{id, static_cast<std::uint32_t>(k)};
        const std::string name = g.value_name(v);
        const bool was_untyped = untyped(t);
        if (fully_known(t) || (!was_untyped && !inferred.count(name))) continue;
        // A graph output is declared by the file even when its type is empty; export writes
        // what the graph holds, so typing it would change the file.
        if (was_untyped && g.is_output(v)) continue;
        if (!merge(t, outs[k])) continue;
        ++changed;
        if (was_untyped && inferred.insert(name).second) names.push_back(name);
      }
    }
    // Elements of small integer outputs are computed now, producers first, so that the
    // recursion in Context::elems never runs deep on a long chain.
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      if (int_type(n.outputs[k].type.dtype)) c.elems(ValueRef{id, static_cast<std::uint32_t>(k)});
  }
  if (!names.empty()) g.properties().set(list_key, std::move(names));
  return changed;
}

namespace {
// Merges `outs` into n's outputs that are untyped or `fresh`; the ports it changed.
std::vector<std::uint32_t> merge_created(Graph& g, NodeId id, const std::vector<OutType>& outs,
                                         const std::vector<std::uint32_t>& fresh) {
  std::vector<std::uint32_t> changed;
  const Node& n = g.node(id);
  for (std::size_t k = 0; k < outs.size() && k < n.outputs.size(); ++k) {
    const ValueType& t = n.outputs[k].type;
    const bool is_fresh = std::find(fresh.begin(), fresh.end(), static_cast<std::uint32_t>(k)) != fresh.end();
    if (fully_known(t) || !(untyped(t) || is_fresh)) continue;
    if (merge(g.output_infos(id)[k].type, outs[k])) changed.push_back(static_cast<std::uint32_t>(k));
  }
  return changed;
}
}  // namespace

std::vector<std::uint32_t> infer_created(Graph& g, NodeId id, const std::vector<std::uint32_t>& fresh) {
  if (opset_version(g, "") < 0) return {};
  const Node& n = g.node(id);
  bool any = false;
  for (std::size_t k = 0; k < n.outputs.size(); ++k) {
    const ValueType& t = n.outputs[k].type;
    const bool is_fresh = std::find(fresh.begin(), fresh.end(), static_cast<std::uint32_t>(k)) != fresh.end();
    any = any || (!fully_known(t) && (untyped(t) || is_fresh));
  }
  if (!any) return {};
  Context c(g);
  return merge_created(g, id, infer_node(c, id), fresh);
}

std::optional<std::vector<std::uint32_t>> infer_created_completely(Graph& g, NodeId id) {
  Context c(g);
  const std::vector<OutType> outs = infer_node(c, id);
  if (outs.empty()) return std::nullopt;
  for (const OutType& o : outs) {
    if (o.dtype == DType::Undefined || !o.shape.known) return std::nullopt;
    for (const Dim& d : o.shape.dims)
      if (!d) return std::nullopt;
  }
  return merge_created(g, id, outs, {});
}

}  // namespace graphfuse::onnx_io::sym
