// Kernel availability: does a target implement this op with these attributes and input
// types? And the profile written back as YAML (for calibrate).
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>

#include "graphfuse/target.h"

namespace graphfuse {

namespace {

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

template <class T, class F>
std::string list_text(const std::vector<T>& xs, F f) {
  std::string out = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + f(xs[i]);
  return out + "]";
}

}  // namespace

std::string attr_text(const AttrValue& v) {
  struct V {
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(float x) const { return number_text(x); }
    std::string operator()(const std::string& x) const { return x; }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const Tensor&) const { return "<tensor>"; }
    std::string operator()(const std::vector<std::int64_t>& x) const {
      return list_text(x, [](std::int64_t i) { return std::to_string(i); });
    }
    std::string operator()(const std::vector<float>& x) const { return list_text(x, [](float f) { return number_text(f); }); }
    std::string operator()(const std::vector<std::string>& x) const {
      return list_text(x, [](const std::string& s) { return s; });
    }
    std::string operator()(const std::vector<bool>& x) const {
      return list_text(x, [](bool b) { return std::string(b ? "true" : "false"); });
    }
    std::string operator()(const std::vector<Tensor>&) const { return "<tensors>"; }
    std::string operator()(const Opaque&) const { return "<opaque>"; }
  };
  return std::visit(V{}, v);
}

std::size_t OpSupport::typed_inputs() const {
  std::size_t n = dtypes.empty() && ranks.empty() ? 0 : 1;
  for (const ShapeCondition& c : shapes) n = std::max(n, static_cast<std::size_t>(c.input) + 1);
  if (pays_up_to > 0) n = std::max(n, static_cast<std::size_t>(pays_up_to_input) + 1);
  return n;
}

bool OpSupport::pays_at(std::span<const TypeView> inputs) const {
  if (pays) return true;
  if (pays_up_to <= 0 || static_cast<std::size_t>(pays_up_to_input) >= inputs.size()) return false;
  const TypeView& t = inputs[static_cast<std::size_t>(pays_up_to_input)];
  if (!t.present || !t.shape_known) return false;
  std::int64_t n = 1;
  for (std::int64_t d : t.shape) {
    if (d < 0 || (d > 0 && n > pays_up_to / d)) return false;  // a symbolic dim, or past the bound
    n *= d;
  }
  return n <= pays_up_to;
}

const OpSupport* TargetProfile::find(std::string_view op) const {
  for (const OpSupport& s : ops)
    if (s.op == op) return &s;
  return nullptr;
}

bool TargetProfile::has_op(std::string_view op) const {
  if (const OpSupport* s = find(op)) return s->available;
  // An op with a domain is a vendor extension: only a listed one is there.
  if (op.find('.') != std::string_view::npos) return false;
  const std::string name(op);
  return std::any_of(standard_ops.begin(), standard_ops.end(),
                     [&](const std::string& glob) { return fnmatch(glob.c_str(), name.c_str(), 0) == 0; });
}

std::string TargetProfile::lacks(std::string_view op, const Attributes& attrs,
                                 const std::vector<const ValueType*>& inputs) const {
  if (!has_op(op)) return "no_kernel: " + std::string(op) + " on " + name;
  const OpSupport* s = find(op);
  if (!s) return {};
  std::vector<TypeView> views;
  views.reserve(inputs.size());
  for (const ValueType* t : inputs) views.push_back(t ? TypeView(*t) : TypeView::absent());
  return lacks(*s, attrs, views);
}

std::string TargetProfile::lacks(const OpSupport& s, const Attributes& attrs, std::span<const TypeView> inputs) const {
  // Built only for a refusal: this runs for every node of every candidate.
  auto refuse = [&](const std::string& why) { return "no_kernel: " + s.op + why + " on " + name; };
  const TypeView* x = inputs.empty() || !inputs[0].present ? nullptr : &inputs[0];
  if (x && x->dtype != DType::Undefined && !s.dtypes.empty() &&
      std::find(s.dtypes.begin(), s.dtypes.end(), x->dtype) == s.dtypes.end())
    return refuse(" with input dtype " + std::string(dtype_name(x->dtype)));
  if (x && x->shape_known && !s.ranks.empty() &&
      std::find(s.ranks.begin(), s.ranks.end(), static_cast<int>(x->shape.size())) == s.ranks.end())
    return refuse(" with input rank " + std::to_string(x->shape.size()));
  if (s.max_inputs >= 0) {
    std::size_t n = inputs.size();
    if (n > static_cast<std::size_t>(s.max_inputs)) return refuse(" with " + std::to_string(n) + " inputs");
  }
  for (const ShapeCondition& c : s.shapes) {
    if (static_cast<std::size_t>(c.input) >= inputs.size()) continue;
    const TypeView& in = inputs[static_cast<std::size_t>(c.input)];
    if (!in.present || !in.shape_known) continue;
    const std::string which = " with input " + std::to_string(c.input);
    const auto rank = static_cast<std::int64_t>(in.shape.size());
    for (int d : c.dims) {
      std::int64_t at = d < 0 ? d + rank : d;
      if (at < 0 || at >= rank)
        return refuse(which + " of rank " + std::to_string(rank) + " (no dim " + std::to_string(d) + ")");
      std::int64_t v = in.shape[static_cast<std::size_t>(at)];
      if (v < 0) continue;  // a symbolic dim: not known
      std::string needs;
      if (!c.values.empty() && std::find(c.values.begin(), c.values.end(), v) == c.values.end())
        needs = list_text(c.values, [](std::int64_t x) { return std::to_string(x); });
      else if (c.multiple_of > 0 && v % c.multiple_of != 0)
        needs = "a multiple of " + std::to_string(c.multiple_of);
      else if (v < c.min)
        needs = ">= " + std::to_string(c.min);
      else if (v > c.max)
        needs = "<= " + std::to_string(c.max);
      if (!needs.empty())
        return refuse(which + " dim " + std::to_string(d) + " = " + std::to_string(v) + " (needs " + needs + ")");
    }
  }
  for (const AttrCondition& c : s.attrs) {
    const AttrValue* v = attrs.find(c.name);
    if (!v && c.fallback.empty()) {
      if (c.required) return refuse(" without " + c.name);
      continue;
    }
    if (c.values.empty()) continue;
    std::string text = v ? attr_text(*v) : c.fallback;
    if (std::find(c.values.begin(), c.values.end(), text) == c.values.end()) return refuse(" with " + c.name + " " + text);
  }
  return {};
}

std::string target_yaml(const TargetProfile& t) {
  std::string o = "target: " + t.name + "\n";
  if (!t.doc.empty()) o += "doc: \"" + t.doc + "\"\n";
  o += "standard_ops: " + list_text(t.standard_ops, [](const std::string& s) { return "\"" + s + "\""; }) + "\n";
  o += "min_saving_us: " + number_text(t.min_saving_us) + "\n";
  o += "min_saving_fraction: " + number_text(t.min_saving_fraction) + "\n";
  if (t.raise_onnx_opset > 0) o += "raise_onnx_opset: " + std::to_string(t.raise_onnx_opset) + "\n";
  const MachineFigures& m = t.machine;
  o += "machine:\n  peak_gflops: {";
  bool first = true;
  for (const auto& [d, v] : m.peak_gflops) {
    o += std::string(first ? "" : ", ") + std::string(dtype_name(d)) + ": " + number_text(v);
    first = false;
  }
  o += "}\n";
  o += "  bandwidth_gbs: " + number_text(m.bandwidth_gbs) + "\n";
  o += "  kernel_overhead_us: " + number_text(m.kernel_overhead_us) + "\n";
  o += "  cache_mb: " + number_text(m.cache_mb) + "\n";
  o += "  threads: " + std::to_string(m.threads) + "\n";
  if (!m.efficiency.empty()) {
    o += "  efficiency:\n";
    for (const auto& [k, pts] : m.efficiency)
      o += "    " + k + ": " +
           list_text(pts, [](const EfficiencyPoint& p) { return "[" + number_text(p.size) + ", " + number_text(p.fraction) + "]"; }) +
           "\n";
  }
  if (t.ops.empty()) return o;
  o += "ops:\n";
  for (const OpSupport& s : t.ops) {
    o += "  " + s.op + ":\n";
    if (!s.available) o += "    available: false\n";
    if (!s.pays) o += "    pays: false\n";
    if (s.pays_up_to > 0)
      o += "    pays_up_to: {input: " + std::to_string(s.pays_up_to_input) + ", elements: " + std::to_string(s.pays_up_to) +
           "}\n";
    if (!s.slower_than.empty())
      o += "    slower_than: " + list_text(s.slower_than, [](const std::string& x) { return x; }) + "\n";
    if (!s.dtypes.empty())
      o += "    dtype: " + list_text(s.dtypes, [](DType d) { return std::string(dtype_name(d)); }) + "\n";
    if (!s.ranks.empty()) o += "    rank: " + list_text(s.ranks, [](int r) { return std::to_string(r); }) + "\n";
    if (s.max_inputs >= 0) o += "    inputs: {max: " + std::to_string(s.max_inputs) + "}\n";
    if (!s.shapes.empty()) {
      o += "    shape:\n";
      auto ints = [](const auto& xs) { return list_text(xs, [](auto x) { return std::to_string(x); }); };
      for (const ShapeCondition& c : s.shapes) {
        o += "      - {input: " + std::to_string(c.input) + ", dim: " + ints(c.dims);
        if (!c.values.empty()) o += ", values: " + ints(c.values);
        if (c.multiple_of > 0) o += ", multiple_of: " + std::to_string(c.multiple_of);
        if (c.min != std::numeric_limits<std::int64_t>::min()) o += ", min: " + std::to_string(c.min);
        if (c.max != std::numeric_limits<std::int64_t>::max()) o += ", max: " + std::to_string(c.max);
        o += "}\n";
      }
    }
    if (!s.attrs.empty()) {
      o += "    attributes:\n";
      for (const AttrCondition& c : s.attrs) {
        o += "      " + c.name + ": {";
        std::string parts;
        if (!c.values.empty()) parts += "values: " + list_text(c.values, [](const std::string& v) { return v; });
        if (c.required) parts += std::string(parts.empty() ? "" : ", ") + "required: true";
        if (!c.fallback.empty()) parts += std::string(parts.empty() ? "" : ", ") + "default: " + c.fallback;
        o += parts + "}\n";
      }
    }
    if (!s.note.empty()) o += "    note: \"" + s.note + "\"\n";
  }
  return o;
}

}  // namespace graphfuse
