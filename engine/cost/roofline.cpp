// Per-node estimates on a roofline: time = max(FLOPs / (peak x efficiency),
// bytes / (bandwidth x efficiency)) + per-kernel overhead.
#include <algorithm>
#include <cmath>

#include "node_estimate.h"

namespace graphfuse {

namespace {

double elements(const TypeView& t) {
  if (!t.present || !t.shape_known) return -1;
  double n = 1;
  for (std::int64_t d : t.shape) {
    if (d < 0) return -1;
    n *= static_cast<double>(d);
  }
  return n;
}

double bytes_of(const TypeView& t) {
  double n = elements(t);
  if (n < 0) return -1;
  std::size_t sz = t.dtype == DType::Undefined ? 4 : dtype_size(t.dtype);
  return n * static_cast<double>(sz == 0 ? 4 : sz);
}

std::string_view local_name(std::string_view op) {
  std::size_t dot = op.rfind('.');
  return dot == std::string_view::npos ? op : op.substr(dot + 1);
}

bool is_constant_name(std::string_view op) { return op == "Const" || op == "Constant"; }

// Ops classified by name: the convolution and matrix-product families of ONNX, ONNX
// Runtime's contrib ops and TensorFlow; every other op is placed on the memory roofline.
CostClass classify(std::string_view op) {
  if (op == "Input" || is_constant_name(op)) return CostClass::Free;
  std::string_view local = local_name(op);
  if (local.find("Conv") != std::string_view::npos) return CostClass::Conv;
  if (local.find("MatMul") != std::string_view::npos || local == "Gemm" || local == "BatchMatMul" ||
      local == "BatchMatMulV2")
    return CostClass::MatMul;
  return CostClass::Eltwise;
}

// Transcendental and otherwise arithmetic-heavy elementwise ops: far below the bandwidth
// roofline in a plain kernel, free as a convolution's post-op.
bool is_math(std::string_view local) {
  for (std::string_view m : {"Sigmoid", "Tanh", "Exp", "Log", "Erf", "Gelu", "FastGelu", "BiasGelu", "QuickGelu",
                             "Softplus", "Softsign", "Elu", "Selu", "Mish", "HardSwish", "Softmax", "LogSoftmax",
                             "Pow", "Sqrt", "Reciprocal", "Sin", "Cos"})
    if (local == m) return true;
  return false;
}

// ONNX convolutions keep channels in dim 1; TensorFlow's follow data_format (NHWC default).
double out_channels(const cost::OpFacts& f, const Attributes& attrs, const TypeView& out) {
  const auto& s = out.shape;
  if (s.size() < 2) return -1;
  bool nhwc = !f.onnx_layout;
  if (const auto* fmt = attrs.get_if<std::string>("data_format")) nhwc = fmt->rfind("NC", 0) != 0;
  if (f.nhwc_only) nhwc = true;
  return static_cast<double>(nhwc ? s.back() : s[1]);
}

// A convolution's kind from its weight (input 1): grouped (depthwise) when `group` > 1 or
// the op says so, 1x1 when the weight's spatial extent is one.
KernelKind conv_kind(const cost::OpFacts& f, const Attributes& attrs, const TypeView* w) {
  if (f.depthwise) return KernelKind::DepthwiseConv;
  if (const auto* g = attrs.get_if<std::int64_t>("group"); g && *g > 1) return KernelKind::DepthwiseConv;
  if (!w || !w->present || !w->shape_known || w->shape.size() < 3) return KernelKind::Conv;
  const auto& s = w->shape;
  // ONNX weights are [M, C/group, k...]; TensorFlow's [k..., C, M].
  bool onnx = f.onnx_layout;
  double spatial = 1;
  for (std::size_t i = onnx ? 2 : 0; i < (onnx ? s.size() : s.size() - 2); ++i) spatial *= static_cast<double>(s[i]);
  return spatial == 1 ? KernelKind::Conv1x1 : KernelKind::Conv;
}

}  // namespace

bool is_constant_op(OpType op) {
  static const OpType k_const = OpType::intern("Const"), k_constant = OpType::intern("Constant");
  return op == k_const || op == k_constant;
}

const char* kernel_kind_key(KernelKind k) {
  switch (k) {
    case KernelKind::Conv: return "conv";
    case KernelKind::Conv1x1: return "conv1x1";
    case KernelKind::DepthwiseConv: return "dwconv";
    case KernelKind::MatMul: return "matmul";
    case KernelKind::Eltwise: return "eltwise";
    case KernelKind::Transpose: return "transpose";
    case KernelKind::Math: return "math";
  }
  return "eltwise";
}

ValueType value_type(const Graph& g, ValueRef v) {
  TypeView t = cost::type_view(g, v);
  ValueType out;
  out.dtype = t.dtype;
  out.shape.assign(t.shape.begin(), t.shape.end());
  out.shape_known = t.shape_known;
  return out;
}

namespace cost {

OpFacts op_facts(std::string_view op) {
  OpFacts f;
  f.cls = classify(op);
  std::string_view local = local_name(op);
  if (f.cls == CostClass::MatMul) f.kind = KernelKind::MatMul;
  else if (local == "Transpose") f.kind = KernelKind::Transpose;
  else if (is_math(local)) f.kind = KernelKind::Math;
  f.onnx_layout = op == "Conv" || op == "ConvTranspose" || op == "com.microsoft.FusedConv" ||
                  op == "com.microsoft.NhwcConv" || op == "ConvInteger";
  f.nhwc_only = op == "com.microsoft.NhwcConv";
  f.depthwise = local.find("Depthwise") != std::string_view::npos;
  return f;
}

const OpFacts& op_facts(OpType op) {
  // Per thread: no lock after an op's first estimate on a thread.
  thread_local std::vector<OpFacts> facts;
  thread_local std::vector<char> known;
  const std::size_t i = op.index();
  if (i >= known.size()) {
    facts.resize(i + 1);
    known.resize(i + 1, 0);
  }
  if (!known[i]) {
    facts[i] = op_facts(op.name());
    known[i] = 1;
  }
  return facts[i];
}

TypeView type_view(const Graph& g, ValueRef v) {
  if (!v.valid() || !g.alive(v.node)) return {};
  const Node& n = g.node(v.node);
  TypeView t;
  if (v.port < n.outputs.size()) {
    t = TypeView(n.outputs[v.port].type);
    if (t.shape_known) return t;
  }
  if (is_constant_op(n.op)) {
    if (const auto* tensor = n.attrs.get_if<Tensor>("value")) {
      t.shape = tensor->shape;
      t.dtype = tensor->dtype;
      t.shape_known = true;
    } else if (const auto* shape = n.attrs.get_if<std::vector<std::int64_t>>("shape")) {
      t.shape = *shape;
      t.shape_known = true;
    }
  }
  return t;
}

NodeCost estimate_node(const CostModel& m, const OpFacts& f, const Attributes& attrs, std::span<const TypeView> inputs,
                       bool all_const, const TypeView& output) {
  NodeCost c;
  c.cls = f.cls;
  if (c.cls == CostClass::Free) return c;
  // All inputs constant: constant folding evaluates it once, before any run.
  if (all_const) {
    c.cls = CostClass::Free;
    return c;
  }
  const double out_elems = elements(output);
  // Bytes: every input read once, the output written once. A value the node reads twice
  // (SkipSimplifiedLayerNormalization(x, x, gamma), the checker-valid form of an RMS norm)
  // is one buffer read once: the kernel walks both operands row by row, so the second read
  // of a row is served from cache. Two views of one value share its shape storage; views
  // of distinct values never do.
  double bytes = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TypeView& in = inputs[i];
    double b = bytes_of(in);
    if (in.present && b < 0) c.known = false;
    bool repeated = false;
    if (in.present && !in.shape.empty())
      for (std::size_t j = 0; j < i && !repeated; ++j)
        repeated = inputs[j].present && inputs[j].shape.data() == in.shape.data() &&
                   inputs[j].shape.size() == in.shape.size();
    if (!repeated) bytes += std::max(b, 0.0);
  }
  double out_bytes = bytes_of(output);
  if (out_bytes < 0) {
    c.known = false;
    // An unknown output: as large as the largest input (elementwise ops).
    for (const TypeView& in : inputs) out_bytes = std::max(out_bytes, bytes_of(in));
  }
  bytes += std::max(out_bytes, 0.0);
  c.bytes = bytes;

  double flops = std::max(out_elems, 0.0);  // one operation per output element
  if (c.cls == CostClass::Conv && inputs.size() >= 2) {
    double w = elements(inputs[1]);
    double oc = output.shape_known ? out_channels(f, attrs, output) : -1;
    if (w > 0 && oc > 0 && out_elems > 0) flops = 2.0 * out_elems * w / oc;
    else c.known = false;
  } else if (c.cls == CostClass::MatMul && !inputs.empty() && inputs[0].present && inputs[0].shape_known &&
             !inputs[0].shape.empty() && out_elems > 0) {
    const auto& a = inputs[0].shape;
    bool trans = false;
    for (const char* k : {"transA", "transpose_a", "adj_x"}) {
      if (const auto* v = attrs.get_if<std::int64_t>(k)) trans = trans || *v != 0;
      if (const auto* v = attrs.get_if<bool>(k)) trans = trans || *v;
    }
    double k = static_cast<double>(trans && a.size() >= 2 ? a[a.size() - 2] : a.back());
    flops = 2.0 * out_elems * k;
  } else if (c.cls != CostClass::Eltwise) {
    c.known = false;
  }
  c.flops = flops;
  if (c.cls == CostClass::Conv) c.kind = conv_kind(f, attrs, inputs.size() >= 2 ? &inputs[1] : nullptr);
  else c.kind = f.kind;

  const TargetProfile& t = m.target();
  DType dt = output.dtype != DType::Undefined ? output.dtype : DType::Float32;
  auto peak_it = t.machine.peak_gflops.find(dt);
  double peak = peak_it != t.machine.peak_gflops.end() ? peak_it->second : t.machine.peak_gflops.at(DType::Float32);
  // A compute kernel's memory traffic follows the plain elementwise curve; an elementwise
  // kernel's follows its kind's (a Transpose or a Sigmoid moves bytes more slowly).
  double compute_us = c.cls == CostClass::Eltwise ? 0.0 : flops / (peak * 1e3 * m.efficiency(c.kind, flops));
  KernelKind mem_kind = c.cls == CostClass::Eltwise ? c.kind : KernelKind::Eltwise;
  double memory_us = bytes / (t.machine.bandwidth_gbs * 1e3 * m.efficiency(mem_kind, bytes));
  c.us = std::max(compute_us, memory_us) + t.machine.kernel_overhead_us;
  return c;
}

NodeCost estimate_node(const CostModel& m, const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  thread_local std::vector<TypeView> in;
  in.clear();
  bool all_const = !node.inputs.empty();
  for (ValueRef v : node.inputs) {
    in.push_back(v.valid() ? type_view(g, v) : TypeView::absent());
    all_const = all_const && v.valid() && is_constant_op(g.node(v.node).op);
  }
  return estimate_node(m, op_facts(node.op), node.attrs, in, all_const, type_view(g, ValueRef{n, 0}));
}

bool output_unknown(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (op_facts(node.op).cls == CostClass::Free) return false;
  if (elements(type_view(g, ValueRef{n, 0})) >= 0) return false;
  // All inputs constant: folded, free, and known.
  bool all_const = !node.inputs.empty();
  for (ValueRef v : node.inputs) all_const = all_const && v.valid() && is_constant_op(g.node(v.node).op);
  return !all_const;
}

}  // namespace cost

CostModel::CostModel(TargetProfile target) : t_(std::move(target)) {
  const auto& curves = t_.machine.efficiency;
  for (std::size_t k = 0; k < curves_.size(); ++k) {
    auto kind = static_cast<KernelKind>(k);
    auto it = curves.find(kernel_kind_key(kind));
    if (it == curves.end() || it->second.empty()) {
      bool compute = kind == KernelKind::Conv1x1 || kind == KernelKind::DepthwiseConv;
      it = curves.find(compute ? "conv" : kind == KernelKind::MatMul ? "matmul" : "eltwise");
    }
    curves_[k] = it == curves.end() || it->second.empty() ? nullptr : &it->second;
  }
}

double CostModel::efficiency(KernelKind kind, double size) const {
  const std::vector<EfficiencyPoint>* curve = curves_[static_cast<std::size_t>(kind)];
  if (!curve || size <= 0) return 1.0;
  const auto& pts = *curve;
  if (size <= pts.front().size) return pts.front().fraction;
  if (size >= pts.back().size) return pts.back().fraction;
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (size > pts[i].size) continue;
    double a = std::log(pts[i - 1].size), b = std::log(pts[i].size);
    double f = (std::log(size) - a) / (b - a);
    return pts[i - 1].fraction + f * (pts[i].fraction - pts[i - 1].fraction);
  }
  return pts.back().fraction;
}

NodeCost CostModel::estimate(const CostQuery& q) const {
  static const Attributes kNone;
  std::vector<TypeView> in;
  in.reserve(q.inputs.size());
  for (const ValueType* t : q.inputs) in.push_back(t ? TypeView(*t) : TypeView::absent());
  bool all_const = !q.const_inputs.empty() &&
                   std::all_of(q.const_inputs.begin(), q.const_inputs.end(), [](bool b) { return b; });
  TypeView out = q.output ? TypeView(*q.output) : TypeView::absent();
  return cost::estimate_node(*this, cost::op_facts(q.op), q.attrs ? *q.attrs : kNone, in, all_const, out);
}

NodeCost CostModel::estimate(const Graph& g, NodeId n) const { return cost::estimate_node(*this, g, n); }

double CostModel::graph_us(const Graph& g) const {
  double total = 0;
  g.for_each_node([&](NodeId n) { total += estimate(g, n).us; });
  return total;
}

}  // namespace graphfuse
