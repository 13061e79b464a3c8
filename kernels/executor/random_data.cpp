// Seeded random tensors and the shapes of graph inputs that carry no type.
#include "executor/random_data.h"

#include <algorithm>
#include <cmath>

#include "executor/node_errors.h"
#include "graphfuse/kernels/executor.h"

namespace graphfuse::kernels {

namespace {
std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}
}  // namespace

Tensor random_tensor(std::uint64_t seed, std::string_view name, const Shape& shape, RandomRole role) {
  std::uint64_t state = fnv1a(name, seed * 0x9e3779b97f4a7c15ull + 1);
  for (auto d : shape) state = state * 31 + static_cast<std::uint64_t>(d);
  // Allocated first: alloc bounds the shape (a file may declare any), and only then is
  // its element count safe to compute below.
  Tensor t = alloc_f32(shape);
  float lo = -1.0f, hi = 1.0f;
  if (role == RandomRole::Weight) {
    // fan_in: all dims but the output-channel one, which is the larger end dim for both
    // OIHW (first) and HWIO / [K, N] (last) weights.
    const std::int64_t out = shape.empty() ? 1 : std::max(shape.front(), shape.back());
    const double fan_in = std::max<double>(1.0, static_cast<double>(numel(shape)) / static_cast<double>(std::max<std::int64_t>(out, 1)));
    hi = static_cast<float>(std::sqrt(3.0 / fan_in));
    lo = -hi;
  } else if (role == RandomRole::Small) {
    lo = -0.1f, hi = 0.1f;
  } else if (role == RandomRole::Positive) {
    lo = 0.5f, hi = 1.5f;
  }
  float* p = mut<float>(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i) {
    const double u = static_cast<double>(splitmix(state) >> 40) * (1.0 / 16777216.0);  // [0, 1)
    p[i] = lo + static_cast<float>(u) * (hi - lo);
  }
  return t;
}

RandomRole role_of_constant(const Graph& g, NodeId n, const Shape& shape) {
  static const OpType kBatchNorm = OpType::intern("BatchNormalization");
  static const OpType kTfBatchNorm = OpType::intern("FusedBatchNorm");
  static const OpType kTfBatchNormV3 = OpType::intern("FusedBatchNormV3");
  for (const Use& u : g.consumers({n, 0})) {
    // TF's FusedBatchNorm takes (x, scale, offset, mean, variance) in ONNX's slots.
    if (const OpType op = g.node(u.node).op; op == kBatchNorm || op == kTfBatchNorm || op == kTfBatchNormV3) {
      if (u.slot == 4 || u.slot == 1) return RandomRole::Positive;  // variance, scale
      if (u.slot >= 2) return RandomRole::Small;
    }
  }
  return shape.size() >= 2 ? RandomRole::Weight : RandomRole::Small;
}

namespace {
// A shape for an untyped input, from what its first consumer expects.
Shape guess_input_shape(const Graph& g, NodeId in) {
  for (const Use& u : g.consumers({in, 0})) {
    const Node& c = g.node(u.node);
    const std::string_view op = c.op.name();
    const Tensor* w = c.inputs.size() > 1 ? constant_tensor(g, c.inputs[1]) : nullptr;
    Shape ws;
    if (w) ws = w->shape;
    if (ws.empty() && c.inputs.size() > 1 && is_constant(g, c.inputs[1]))
      if (auto s = g.node(c.inputs[1].node).attrs.get_if<std::vector<std::int64_t>>("shape")) ws = *s;
    if (u.slot != 0 || ws.empty()) continue;
    if ((op == "Conv" || op == "com.microsoft.FusedConv") && ws.size() == 4) {
      std::int64_t group = 1;
      if (auto gp = c.attrs.get_if<std::int64_t>("group")) group = *gp;
      return {1, ws[1] * group, 32, 32};
    }
    if (op.starts_with("Conv2D") || op.starts_with("FusedConv2D") || op == "_FusedConv2D")
      if (ws.size() == 4) return {1, 32, 32, ws[2]};
    if (op == "BiasAdd" && ws.size() == 1) return {1, 8, 8, ws[0]};
    if ((op == "MatMul" || op == "Gemm" || op == "com.microsoft.FusedMatMul") && ws.size() >= 2) {
      bool tb = false;
      if (auto t = c.attrs.get_if<std::int64_t>("transB")) tb = *t != 0;
      return {1, tb ? ws.back() : ws[ws.size() - 2]};
    }
  }
  return {1, 8, 16, 16};
}
}  // namespace

std::vector<std::vector<std::int64_t>> input_shapes(const Graph& g, const ExecOptions& options) {
  std::vector<Shape> shapes;
  for (NodeId in : g.inputs()) {
    const ValueType& t = g.node(in).outputs.at(0).type;
    if (t.shape_known) {
      Shape s = t.shape;
      for (auto& d : s)
        if (d < 0) d = 1;  // symbolic dims (batch) run at 1
      shapes.push_back(s);
    } else if (!options.default_input_shape.empty()) {
      shapes.push_back(options.default_input_shape);
    } else {
      shapes.push_back(guess_input_shape(g, in));
    }
  }
  return shapes;
}

namespace {
bool is_integer_input(DType t) {
  switch (t) {
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
    case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: case DType::Bool:
      return true;
    default:
      return false;
  }
}

// An integer (or bool) graph input: random 0s and 1s. Integer inputs are indices (token
// ids, position ids: valid for any table of two or more rows) or masks (0/1), so values
// from {0, 1} are valid whatever they index; float random data in their place made Gather fail.
Tensor random_bits(std::uint64_t seed, std::string_view name, const Shape& shape, DType dtype) {
  std::uint64_t state = fnv1a(name, seed * 0x9e3779b97f4a7c15ull + 1);
  for (auto d : shape) state = state * 31 + static_cast<std::uint64_t>(d);
  Tensor t = alloc(dtype, shape);
  const std::size_t es = dtype_size(dtype);
  char* p = mut<char>(t);
  for (std::int64_t i = 0; i < t.num_elements(); ++i)
    if (splitmix(state) >> 63) p[static_cast<std::size_t>(i) * es] = 1;  // little-endian 1; alloc zero-filled
  return t;
}
}  // namespace

std::vector<Tensor> make_random_inputs(const Graph& g, std::uint64_t seed, const ExecOptions& options) {
  const auto shapes = input_shapes(g, options);
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    try {
      const DType dt = n.outputs.at(0).type.dtype;
      if (is_integer_input(dt)) {
        out.push_back(random_bits(seed, n.id, shapes[i], dt));
        continue;
      }
      out.push_back(random_tensor(seed, n.id, shapes[i], RandomRole::Input));
    } catch (const Error& e) {
      // A declared input shape too large to allocate: say which input and where.
      throw Error(node_loc(g, n), "graph input '" + n.id + "': " + e.message());
    }
  }
  return out;
}

}  // namespace graphfuse::kernels
