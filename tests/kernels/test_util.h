// Helpers for the kernel tests: tensor literals, random tensors, closeness checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/kernel.h"

namespace gk = graphfuse::kernels;
using graphfuse::AttrValue;
using graphfuse::Attributes;
using graphfuse::DType;
using graphfuse::Tensor;
using Shape = std::vector<std::int64_t>;

/// A float32 tensor literal.
inline Tensor T(Shape shape, std::vector<float> v) { return Tensor::from_floats(std::move(shape), v); }
/// An int64 tensor literal.
inline Tensor I(Shape shape, std::vector<std::int64_t> v) { return Tensor::from_ints(std::move(shape), v); }
/// A tensor of `dtype` holding `v`'s elements as they lie in memory (any element type:
/// uint8 and int8 for quantized inputs, uint16 bit patterns for bfloat16, ...).
template <class E>
Tensor typed(DType dtype, Shape shape, const std::vector<E>& v) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(E));
  return t;
}

/// Adds a graph input `name` of float32 with a known `shape`.
inline graphfuse::NodeId float_input(graphfuse::Graph& g, const std::string& name, Shape shape) {
  graphfuse::ValueType t;
  t.dtype = DType::Float32;
  t.shape = std::move(shape);
  t.shape_known = true;
  return g.add_input(name, t);
}

/// The absent optional input for run_op.
inline Tensor none() {
  Tensor t;
  t.dtype = DType::Undefined;
  return t;
}

inline std::vector<float> values(const Tensor& t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.num_elements());
}
inline std::vector<std::int64_t> ivalues(const Tensor& t) {
  return std::vector<std::int64_t>(t.as<std::int64_t>(), t.as<std::int64_t>() + t.num_elements());
}

/// Uniform [lo, hi) float32 tensor from a fixed seed.
inline Tensor rnd(Shape shape, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(gen);
  return Tensor::from_floats(std::move(shape), v);
}

// A random 2-D convolution for the fast-vs-reference tests: case t % 4 == 0 grouped,
// == 1 depthwise, else plain; `pick(lo, hi)` draws an integer in [lo, hi].
struct ConvCase {
  std::int64_t n, cin, cin_g, cout, group, k, stride, dilation, h, w;
};
template <class Pick>
ConvCase random_conv_case(int t, Pick&& pick) {
  ConvCase c{};
  const std::int64_t group = t % 4 == 0 ? pick(2, 6) : (t % 4 == 1 ? -1 : 1);  // -1: depthwise
  c.cin_g = group == -1 ? 1 : pick(1, 9);
  c.group = group == -1 ? pick(2, 12) : group;
  c.cin = c.cin_g * c.group;
  c.cout = (group == -1 ? 1 : pick(1, 6)) * c.group;
  c.k = pick(1, 3) * 2 - 1;
  c.stride = pick(1, 2);
  c.dilation = pick(1, 2);
  c.h = pick(c.k * c.dilation, 14);
  c.w = pick(c.k * c.dilation, 14);
  c.n = pick(1, 2);
  return c;
}

inline Attributes attrs(std::initializer_list<std::pair<std::string, AttrValue>> kv) {
  Attributes a;
  for (const auto& [k, v] : kv) a.set(k, v);
  return a;
}

/// Runs one op with the reference kernels.
inline std::vector<Tensor> ref(const std::string& op, const std::vector<Tensor>& in,
                               const Attributes& a = {}, std::size_t outs = 1) {
  return gk::run_op(gk::KernelSet::Reference, op, in, a, outs);
}
inline std::vector<Tensor> fast(const std::string& op, const std::vector<Tensor>& in,
                                const Attributes& a = {}, std::size_t outs = 1) {
  return gk::run_op(gk::KernelSet::Fast, op, in, a, outs);
}

/// Elementwise |a-e| <= atol + rtol*|e| with a readable failure.
inline void expect_close(const Tensor& a, const Tensor& e, double rtol = 1e-4, double atol = 1e-5,
                         const std::string& what = "") {
  auto d = gk::compare_outputs({a}, {e}, rtol, atol).at(0);
  EXPECT_TRUE(d.pass) << what << " max_abs=" << d.max_abs << " max_rel=" << d.max_rel
                      << " shape_ok=" << d.shape_ok;
}

/// Element-exact float comparison with a list literal (hand-computed cases).
inline void expect_values(const Tensor& t, Shape shape, std::vector<float> v, float tol = 1e-5f) {
  ASSERT_EQ(t.shape, shape);
  ASSERT_EQ(t.dtype, DType::Float32);
  auto got = values(t);
  ASSERT_EQ(got.size(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(got[i], v[i], tol) << "element " << i;
}
