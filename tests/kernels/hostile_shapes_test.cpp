// Hostile shapes and attributes: every registered kernel of both sets on rank-0, zero-size
// and ill-formed inputs must either return a well-formed result or throw graphfuse::Error,
// never crash, never throw anything else. Issue 16's crashes are kept as regression tests.
//
// A crash here takes the whole test binary down (which ctest reports as a failure). To
// find which case crashed, run with GRAPHFUSE_SWEEP_TRACE=1: each case is printed (and
// flushed) before it runs; GRAPHFUSE_SWEEP_OP=Name sweeps that op alone.
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "graphfuse/error.h"
#include "graphfuse/kernels/fold.h"
#include "kernels/test_util.h"

namespace {

using graphfuse::Error;
using graphfuse::Graph;
using graphfuse::OpType;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

struct Case {
  std::string name;
  Tensor t;
};

Tensor f32_of(Shape s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25f + 0.125f * static_cast<float>(i % 7);
  return Tensor::from_floats(std::move(s), v);
}

// A tensor whose bytes cover one element of the six its shape claims (a file can say so).
Tensor short_data() {
  Tensor t = T({1}, {1.0f});
  t.shape = {2, 3};
  return t;
}

// Input 0 of every sweep: rank 0, and zero-size in each position of ranks 1 to 4.
std::vector<Case> hostile_inputs() {
  return {
      {"scalar", f32_of({})},           {"[0]", f32_of({0})},
      {"[0,3]", f32_of({0, 3})},        {"[2,0]", f32_of({2, 0})},
      {"[0,2,3]", f32_of({0, 2, 3})},   {"[2,0,3]", f32_of({2, 0, 3})},
      {"[0,2,3,3]", f32_of({0, 2, 3, 3})}, {"[1,0,3,3]", f32_of({1, 0, 3, 3})},
      {"[1,2,0,3]", f32_of({1, 2, 0, 3})}, {"[1,2,3,0]", f32_of({1, 2, 3, 0})},
      {"[2,3]", f32_of({2, 3})},        {"[1,2,3,3]", f32_of({1, 2, 3, 3})},
      {"i64 scalar", I({}, {3})},       {"i64 [0,3]", I({0, 3}, {})},
      {"i64 [2,3]", I({2, 3}, {0, 1, 2, 3, 4, 5})},
      {"short data", short_data()},
  };
}

// What the other inputs get: the same tensor, a scalar, or int64 shape/axes/index operands.
std::vector<Case> companions(const Tensor& first) {
  return {
      {"same", first},
      {"f32 scalar", f32_of({})},
      {"i64 scalar 0", I({}, {0})},
      {"i64 [1]{0}", I({1}, {0})},
      {"i64 [1]{-1}", I({1}, {-1})},
      {"i64 [1]{min}", I({1}, {kMin})},
      {"i64 [3]{max,max,4}", I({3}, {kMax, kMax, 4})},
      {"i64 []", I({0}, {})},
      {"f32 [0]", f32_of({0})},
  };
}

std::vector<std::pair<std::string, Attributes>> attribute_variants() {
  return {
      {"{}", {}},
      {"axis=0", attrs({{"axis", std::int64_t{0}}})},
      {"axis=-1", attrs({{"axis", std::int64_t{-1}}})},
      {"axis=5", attrs({{"axis", std::int64_t{5}}})},
      {"strides=0 SAME", attrs({{"strides", Shape{0, 0}}, {"padding", std::string("SAME")},
                                {"auto_pad", std::string("SAME_UPPER")}, {"kernel_shape", Shape{1, 1}}})},
      {"kernel_shape=0", attrs({{"kernel_shape", Shape{0, 0}}})},
      {"dilations=0", attrs({{"dilations", Shape{0, 0}}, {"kernel_shape", Shape{1, 1}}})},
      {"pads<0", attrs({{"pads", Shape{-5, -5, -5, -5}}, {"kernel_shape", Shape{1, 1}}})},
      {"group=0", attrs({{"group", std::int64_t{0}}})},
      {"perm bad", attrs({{"perm", Shape{5, 5}}})},
      {"split", attrs({{"split", Shape{1, 1}}})},
      {"starts/ends", attrs({{"starts", Shape{0}}, {"ends", Shape{1}}})},
      {"transBatch", attrs({{"transBatchA", std::int64_t{1}}, {"transBatchB", std::int64_t{1}}})},
      {"axis=min", attrs({{"axis", kMin}})},
      {"NCHW", attrs({{"data_format", std::string("NCHW")}})},
      {"huge window", attrs({{"kernel_shape", Shape{kMax, kMax}}, {"pads", Shape{kMax, kMax, kMax, kMax}},
                             {"strides", Shape{kMax, kMax}}, {"dilations", Shape{kMax, kMax}}})},
      {"huge split", attrs({{"split", Shape{kMax, kMax, 4}}})},
      {"split<0", attrs({{"split", Shape{-1, 3}}})},
      {"extreme starts", attrs({{"starts", Shape{kMin}}, {"ends", Shape{kMax}}})},
  };
}

bool trace() {
  static const bool on = std::getenv("GRAPHFUSE_SWEEP_TRACE") != nullptr;
  return on;
}

// The outcome of one call: the outputs, or the error message.
struct Outcome {
  bool ok = false;
  std::vector<Tensor> outs;
  std::string error;
};

// Calls that returned outputs / threw Error, for the log: a sweep where everything is
// rejected up front would prove little.
std::size_t g_accepted = 0, g_rejected = 0;

// Runs one case; any failure other than graphfuse::Error is a test failure.
Outcome attempt(gk::KernelSet set, const std::string& op, const std::vector<Tensor>& in,
                const Attributes& a, std::size_t outs, const std::string& label) {
  if (trace()) std::cerr << "[sweep] " << gk::kernel_set_name(set) << ' ' << label << std::endl;
  Outcome o;
  try {
    o.outs = gk::run_op(set, op, in, a, outs);
    o.ok = true;
    ++g_accepted;
  } catch (const Error& e) {
    o.error = e.message();
    ++g_rejected;
    EXPECT_FALSE(o.error.empty()) << label;
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": threw " << typeid(e).name() << " (" << e.what()
                  << ") instead of graphfuse::Error";
  }
  if (!o.ok) return o;
  EXPECT_FALSE(o.outs.empty()) << label << ": no outputs";
  for (const Tensor& t : o.outs) {
    if (!t.has_data()) continue;
    for (auto d : t.shape) EXPECT_GE(d, 0) << label << ": negative output dim";
    const auto need = static_cast<std::size_t>(t.num_elements()) * graphfuse::dtype_size(t.dtype);
    EXPECT_GE(t.data->size(), need) << label << ": output holds fewer bytes than its shape";
  }
  return o;
}

// Both sets on one case; when both succeed, their results must agree.
void both(const std::string& op, const std::vector<Tensor>& in, const Attributes& a, std::size_t outs,
          const std::string& label, std::map<std::string, int>& disagreements) {
  const auto& fast_reg = gk::registry(gk::KernelSet::Fast);
  const auto& ref_reg = gk::registry(gk::KernelSet::Reference);
  Outcome r, f;
  if (ref_reg.has(op)) r = attempt(gk::KernelSet::Reference, op, in, a, outs, label);
  if (fast_reg.has(op)) f = attempt(gk::KernelSet::Fast, op, in, a, outs, label);
  if (!ref_reg.has(op) || !fast_reg.has(op)) return;
  if (r.ok != f.ok) {
    // The checks run before either set's kernel, so the sets accept the same inputs.
    ++disagreements[op];
    ADD_FAILURE() << label << ": only the " << (r.ok ? "reference" : "fast") << " set accepted it ("
                  << (r.ok ? f.error : r.error) << ")";
    return;
  }
  if (!r.ok) return;
  ASSERT_EQ(r.outs.size(), f.outs.size()) << label;
  for (std::size_t k = 0; k < r.outs.size(); ++k) {
    if (!r.outs[k].has_data() || !f.outs[k].has_data()) continue;
    EXPECT_EQ(r.outs[k].shape, f.outs[k].shape) << label << " output " << k;
    if (r.outs[k].shape != f.outs[k].shape || r.outs[k].dtype != f.outs[k].dtype) continue;
    auto d = gk::compare_outputs({f.outs[k]}, {r.outs[k]}, 1e-3, 1e-4).at(0);
    EXPECT_TRUE(d.pass) << label << " output " << k << ": fast vs reference max_abs " << d.max_abs;
  }
}

// Every op of both sets, or only GRAPHFUSE_SWEEP_OP when set (to bisect a crash).
std::set<std::string> all_ops() {
  std::set<std::string> ops;
  const char* only = std::getenv("GRAPHFUSE_SWEEP_OP");
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast})
    for (const auto& op : gk::registry(set).ops())
      if (!only || op == only) ops.insert(op);
  return ops;
}

// Every op, input 0 hostile, every other input one of the companions, 1 to 4 inputs.
TEST(HostileShapes, EveryKernelOnRankZeroAndZeroSizeInputs) {
  gk::ThreadScope one(1);  // tiny shapes: no thread team to wait for
  std::map<std::string, int> disagreements;
  std::size_t cases = 0;
  for (const std::string& op : all_ops())
    for (const Case& x : hostile_inputs())
      for (const Case& other : companions(x.t))
        for (std::size_t arity = 1; arity <= 4; ++arity)
          for (std::size_t outs : {1u, 2u}) {
            if (arity == 1 && other.name != "same") continue;  // no other inputs to vary
            std::vector<Tensor> in{x.t};
            for (std::size_t k = 1; k < arity; ++k) in.push_back(other.t);
            std::ostringstream label;
            label << op << " x=" << x.name << " others=" << other.name << " arity=" << arity
                  << " outs=" << outs;
            both(op, in, {}, outs, label.str(), disagreements);
            ++cases;
          }
  for (const auto& [op, n] : disagreements)
    std::cout << "  " << op << ": the sets disagree on success in " << n << " cases\n";
  std::cout << "  " << cases << " cases x 2 sets: " << g_accepted << " calls returned a result, "
            << g_rejected << " an Error\n";
}

// Every op with attributes that are out of range (strides/dilations/kernel 0, negative
// pads, axis beyond the rank, ...), all inputs the same hostile tensor.
TEST(HostileShapes, EveryKernelWithOutOfRangeAttributes) {
  gk::ThreadScope one(1);
  std::map<std::string, int> disagreements;
  for (const std::string& op : all_ops())
    for (const Case& x : hostile_inputs())
      for (const auto& [aname, a] : attribute_variants())
        for (std::size_t arity = 1; arity <= 3; ++arity) {
          std::vector<Tensor> in(arity, x.t);
          both(op, in, a, 1, op + " x=" + x.name + " attrs=" + aname + " arity=" + std::to_string(arity),
               disagreements);
        }
}

// ---- issue 16 regressions: each crashed before (signal or heap corruption) ----------

// Runs op in both sets and requires a graphfuse::Error whose message contains `needle`.
void expect_error_both(const std::string& op, const std::vector<Tensor>& in, const Attributes& a,
                       const std::string& needle, std::size_t outs = 1) {
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    try {
      gk::run_op(set, op, in, a, outs);
      ADD_FAILURE() << op << " (" << gk::kernel_set_name(set) << ") accepted the input";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(needle), std::string::npos)
          << op << " (" << gk::kernel_set_name(set) << "): " << e.message();
    }
  }
}

// SIGSEGV: the axis of a rank-0 input was taken as 0 and x.shape[0] read past the end.
TEST(HostileShapes, SplitConcatSliceGatherRejectRankZero) {
  const Tensor s = T({}, {1.5f});
  expect_error_both("Split", {s}, {}, "rank", 2);
  expect_error_both("Split", {s, I({2}, {0, 0})}, {}, "rank", 2);
  expect_error_both("Concat", {s, s}, attrs({{"axis", std::int64_t{0}}}), "rank");
  expect_error_both("Slice", {s, I({1}, {0}), I({1}, {1})}, {}, "rank");
  expect_error_both("Gather", {s, I({}, {0})}, {}, "rank");
  expect_error_both("ConcatV2", {s, s, I({}, {0})}, {}, "rank");
  expect_error_both("SplitV", {s, I({2}, {-1, 0}), I({}, {0})}, {}, "rank", 2);
  // Found by the sweep beside the reported ones: axes of a scalar in Reduce* and Squeeze.
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "Squeeze"})
    expect_error_both(op, {s, I({}, {0})}, {}, "rank-0");
  // A slice of a scalar with no axes is the scalar itself (nothing to index).
  auto r = ref("Slice", {s, I({0}, {}), I({0}, {})});
  expect_values(r.at(0), {}, {1.5f});
}

// Constant folding reached split() on a rule-created Split of a scalar constant: now the
// node is skipped with the kernel's message.
TEST(HostileShapes, FoldingARankZeroSplitSkipsTheNode) {
  Graph g;
  auto c = g.add_node("c", OpType::intern("Const"), {}, attrs({{"value", T({}, {2.0f})}}));
  Attributes sa = attrs({{"_rule", std::string("make_split")}});
  auto sp = g.add_node("sp", OpType::intern("Split"), {{c, 0}}, sa, 1);
  g.add_output({sp, 0});
  gk::FoldReport rep = gk::fold_constants(g);
  ASSERT_EQ(rep.skipped.size(), 1u);
  EXPECT_NE(rep.skipped[0].find("rank"), std::string::npos) << rep.skipped[0];
}

// SIGFPE: TF SAME padding divided by the stride before the stride was checked.
TEST(HostileShapes, ConvAndPoolRejectZeroStridesBeforeComputingPads) {
  const Tensor x = rnd({1, 4, 4, 2}, 1), w = rnd({3, 3, 2, 4}, 2);
  for (Shape st : {Shape{0, 0}, Shape{1, 0, 1, 1}, Shape{-1, 1}}) {
    Attributes a = attrs({{"strides", st}, {"padding", std::string("SAME")}});
    expect_error_both("Conv2D", {x, w}, a, "strides");
    expect_error_both("FusedConv2D_BiasAdd_ReLU", {x, w, rnd({4}, 3)}, a, "strides");
  }
  expect_error_both("Conv2D", {x, w}, attrs({{"dilations", Shape{0, 0}}, {"padding", std::string("SAME")}}),
                    "dilations");
  const Tensor xo = rnd({1, 2, 4, 4}, 4), wo = rnd({3, 2, 3, 3}, 5);
  expect_error_both("Conv", {xo, wo}, attrs({{"strides", Shape{0, 1}}, {"auto_pad", std::string("SAME_UPPER")}}),
                    "strides");
  for (const char* pool : {"MaxPool", "AveragePool"}) {
    expect_error_both(pool, {xo}, attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{0, 0}},
                                         {"auto_pad", std::string("SAME_UPPER")}}), "strides");
    expect_error_both(pool, {xo}, attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{0, 0}}}), "strides");
    expect_error_both(pool, {xo}, attrs({{"kernel_shape", Shape{0, 2}}}), "kernel_shape");
  }
}

// SIGFPE: rows = numel / hidden with a hidden size of 0 (both sets).
TEST(HostileShapes, SkipLayerNormalizationRejectsHiddenSizeZero) {
  const Tensor x = f32_of({2, 3, 0}), g = f32_of({0});
  expect_error_both("com.microsoft.SkipLayerNormalization", {x, x, g}, {}, "hidden size");
  expect_error_both("com.microsoft.SkipLayerNormalization", {x, x, g, g, g}, {}, "hidden size", 4);
  expect_error_both("LayerNormalization", {f32_of({2, 0}), g}, {}, "normalized size");
}

// Heap corruption: with a batch of 0 the fast matmul still ran an M x N product into an
// empty output buffer. Now an empty output is returned as it is, in both sets, and K = 0
// gives zeros (an empty sum), plus Gemm's beta * C.
TEST(HostileShapes, MatMulWithZeroBatchOrZeroDimsGivesTheEmptyOrZeroResult) {
  struct MM {
    std::string op;
    Tensor a, b;
    Attributes at;
    Shape out;
  };
  const std::vector<MM> cases = {
      {"MatMul", f32_of({0, 2, 3}), f32_of({3, 4}), {}, {0, 2, 4}},
      {"MatMul", f32_of({0, 2, 3}), f32_of({0, 3, 4}), {}, {0, 2, 4}},
      {"MatMul", f32_of({2, 3}), f32_of({0, 3, 4}), {}, {0, 2, 4}},
      {"MatMul", f32_of({0, 3}), f32_of({3, 4}), {}, {0, 4}},
      {"MatMul", f32_of({2, 0}), f32_of({0, 4}), {}, {2, 4}},
      {"MatMul", f32_of({0}), f32_of({0}), {}, {}},
      {"com.microsoft.FusedMatMul", f32_of({0, 2, 3}), f32_of({0, 4, 3}),
       attrs({{"transB", std::int64_t{1}}, {"alpha", 2.0f}}), {0, 2, 4}},
      {"com.microsoft.FusedMatMul", f32_of({2, 0, 3}), f32_of({3, 4}), {}, {2, 0, 4}},
      {"Gemm", f32_of({0, 3}), f32_of({3, 4}), {}, {0, 4}},
      {"Gemm", f32_of({2, 0}), f32_of({0, 4}), {}, {2, 4}},
  };
  for (const MM& c : cases)
    for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
      SCOPED_TRACE(c.op + " " + std::string(gk::kernel_set_name(set)));
      auto y = gk::run_op(set, c.op, {c.a, c.b}, c.at).at(0);
      EXPECT_EQ(y.shape, c.out);
      for (float v : values(y)) EXPECT_EQ(v, 0.0f);
    }
  // Gemm, K = 0: y = beta * C.
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto y = gk::run_op(set, "Gemm", {f32_of({2, 0}), f32_of({0, 3}), T({3}, {1, 2, 3})},
                        attrs({{"beta", 0.5f}})).at(0);
    expect_values(y, {2, 3}, {0.5f, 1, 1.5f, 0.5f, 1, 1.5f});
  }
  // TF MatMul goes through the set's FusedMatMul.
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast})
    EXPECT_EQ(gk::run_op(set, "MatMul", {f32_of({0, 3}), f32_of({3, 2})}).at(0).shape, (Shape{0, 2}));
}

// The quantized kernels' oneDNN int8 and vector paths on empty tensors: a batch or a plane
// of 0, a matrix of 0 rows, and inner dimensions of 0. Both sets must agree (or both refuse).
TEST(HostileShapes, QuantizedKernelsOnEmptyTensorsAgreeInBothSets) {
  auto u8 = [](Shape s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return typed(DType::UInt8, std::move(s), std::vector<std::uint8_t>(static_cast<std::size_t>(n), 7));
  };
  auto i8 = [](Shape s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return typed(DType::Int8, std::move(s), std::vector<std::int8_t>(static_cast<std::size_t>(n), 3));
  };
  const Tensor s = T({}, {0.1f}), z = u8({}), z8 = i8({});
  struct Q {
    std::string op;
    std::vector<Tensor> in;
    Attributes at;
  };
  const std::vector<Q> cases = {
      {"QLinearConv", {u8({0, 4, 5, 5}), s, z, i8({8, 4, 3, 3}), s, z8, s, z}, attrs({{"pads", Shape{1, 1, 1, 1}}})},
      {"QLinearConv", {u8({1, 4, 0, 5}), s, z, i8({8, 4, 1, 1}), s, z8, s, z}, {}},
      {"QLinearMatMul", {u8({0, 16}), s, z, i8({16, 8}), s, z8, s, z}, {}},
      {"QLinearMatMul", {u8({3, 0}), s, z, i8({0, 8}), s, z8, s, z}, {}},
      {"com.microsoft.QGemm", {u8({0, 16}), s, z, i8({8, 16}), s, z8, typed(DType::Int32, {8}, std::vector<std::int32_t>(8, 1)), s, z},
       attrs({{"transB", std::int64_t{1}}})},
      {"com.microsoft.QLinearAdd", {u8({0, 3}), s, z, u8({0, 3}), s, z, s, z}, {}},
      {"com.microsoft.QLinearMul", {u8({2, 3, 0, 4}), s, z, u8({2, 3, 1, 1}), s, z, s, z}, {}},
      {"com.microsoft.QLinearGlobalAveragePool", {u8({1, 3, 0, 4}), s, z, s, z}, {}},
      {"com.microsoft.QLinearSigmoid", {u8({0}), s, z, s, z}, {}},
      {"QuantizeLinear", {f32_of({0, 3}), s, z}, {}},
      {"DequantizeLinear", {u8({0, 3}), s, z}, {}},
  };
  for (const Q& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<Tensor> out[2];
    std::string err[2];
    int k = 0;
    for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
      try {
        out[k] = gk::run_op(set, c.op, c.in, c.at);
      } catch (const Error& e) {
        err[k] = e.what();
      }
      ++k;
    }
    EXPECT_EQ(err[0].empty(), err[1].empty()) << "reference: " << err[0] << " / fast: " << err[1];
    if (err[0].empty() && err[1].empty()) {
      EXPECT_TRUE(out[0].at(0) == out[1].at(0));
    }
  }
}

// SIGFPE found by the sweep: the plane size was numel / (batch * channels).
TEST(HostileShapes, BatchNormalizationOfAnEmptyBatchIsEmpty) {
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast})
    for (Shape xs : {Shape{0, 2, 3, 3}, Shape{1, 2, 0, 3}, Shape{1, 0, 3}, Shape{0, 0}}) {
      const Tensor p = f32_of({xs[1]});
      auto y = gk::run_op(set, "BatchNormalization", {f32_of(xs), p, p, p, p}).at(0);
      EXPECT_EQ(y.shape, xs);
    }
}

// Found reading the code: Reshape's shape product wrapped around int64, and three dims
// whose product is 1 mod 2^64 gave a one-element tensor a 1.3e37-element shape (a view
// over 4 bytes; its consumers read past them).
TEST(HostileShapes, ReshapeToAShapeWhoseProductWrapsIsAnError) {
  const Shape wraps{291028859863088071, 543804029693342783, 4348471222203600969};
  expect_error_both("Reshape", {T({1}, {1.0f}), I({3}, wraps)}, {}, "more elements than int64");
  // The same shape on an input is rejected before any kernel sees it.
  Tensor lie = T({1}, {1.0f});
  lie.shape = wraps;
  expect_error_both("Relu", {lie}, {}, "more elements than int64");
}

// Found reading the code: int64 overflow (undefined behaviour) in size arithmetic fed by
// attributes or shape inputs: split sizes summed past the dim, Slice's -step and
// e - s + step - 1, the window arithmetic with huge pads / strides / kernels.
TEST(HostileShapes, ExtremeAttributeValuesDoNotOverflow) {
  const Tensor v = T({5}, {0, 1, 2, 3, 4});
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto fwd = gk::run_op(set, "Slice", {v, I({1}, {0}), I({1}, {5}), I({1}, {0}), I({1}, {kMax})}).at(0);
    expect_values(fwd, {1}, {0});
    auto back = gk::run_op(set, "Slice", {v, I({1}, {4}), I({1}, {kMin}), I({1}, {0}), I({1}, {kMin})}).at(0);
    expect_values(back, {1}, {4});
    auto every2 = gk::run_op(set, "Slice", {v, I({1}, {kMin}), I({1}, {kMax}), I({1}, {0}), I({1}, {2})}).at(0);
    expect_values(every2, {3}, {0, 2, 4});
  }
  expect_error_both("Split", {f32_of({2, 3}), I({3}, {kMax, kMax, 4})}, {}, "do not add up", 3);
  expect_error_both("Split", {f32_of({2, 3}), I({2}, {-1, 3})}, {}, "do not add up", 2);
  const Tensor x = f32_of({1, 2, 4, 4});
  expect_error_both("MaxPool", {x}, attrs({{"kernel_shape", Shape{2, 2}}, {"pads", Shape{kMax, kMax, kMax, kMax}}}),
                    "at most 2147483647");
  expect_error_both("Conv", {x, f32_of({2, 2, 1, 1})}, attrs({{"strides", Shape{kMax, 1}}}), "at most 2147483647");
}

// Found by the sweep under UBSan: int64 (shape) arithmetic overflowed, and INT64_MIN / -1
// traps like a division by zero. Now it wraps as numpy does; Pow saturates; Cast of a NaN
// or out-of-range float to int64 saturates (NaN: 0).
TEST(HostileShapes, Int64ArithmeticWrapsInsteadOfOverflowing) {
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    auto run = [&](const char* op, std::int64_t a, std::int64_t b) {
      return ivalues(gk::run_op(set, op, {I({1}, {a}), I({1}, {b})}).at(0)).at(0);
    };
    EXPECT_EQ(run("Div", kMin, -1), kMin);
    EXPECT_EQ(run("Add", kMax, 1), kMin);
    EXPECT_EQ(run("Sub", kMin, 1), kMax);
    EXPECT_EQ(run("Mul", kMax, 2), -2);
    EXPECT_EQ(run("Pow", 10, 40), kMax);
    EXPECT_EQ(run("Div", 7, -2), -3);
    auto c = gk::run_op(set, "Cast", {T({3}, {std::numeric_limits<float>::quiet_NaN(), 1e30f, -2.5f})},
                        attrs({{"to", std::int64_t{7}}})).at(0);
    EXPECT_EQ(ivalues(c), (std::vector<std::int64_t>{0, kMax, -2}));
  }
}

// bad_alloc: a Const of shape [2^40, 2^40] ended in "error: std::bad_alloc" with no node
// and no file. Now the size is checked before allocating, and the error names the node
// and where it was written.
TEST(HostileShapes, HugeConstantIsAPositionedError) {
  for (Shape s : {Shape{1 << 20, 1 << 20, 1 << 20}, Shape{std::numeric_limits<std::int64_t>::max(), 2},
                  Shape{-3, 4}}) {
    Graph g;
    g.source_file = "huge.graph";
    auto x = g.add_input("x");
    auto c = g.add_node("big", OpType::intern("Const"), {}, attrs({{"shape", s}}), 1,
                        graphfuse::SourceLoc{"huge.graph", 2, 1});
    auto add = g.add_node("add", OpType::intern("Add"), {{x, 0}, {c, 0}});
    g.add_output({add, 0});
    for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
      try {
        gk::run_graph(g, {}, {set, 1, 0, {}});
        ADD_FAILURE() << "ran";
      } catch (const Error& e) {
        EXPECT_EQ(e.loc().str(), "huge.graph:2:1");
        EXPECT_NE(e.message().find("node 'big' (Const)"), std::string::npos) << e.message();
      }
    }
  }
}

// Kernel errors on nodes without a position (ONNX, .gfb, rule-created) named no file:
// they now name the graph's file, and a rule-created node names its rule.
TEST(HostileShapes, KernelErrorsNameTheFileAndTheRule) {
  Graph g;
  g.source_file = "model.onnx";
  auto c = g.add_node("c", OpType::intern("Const"), {}, attrs({{"value", T({}, {2.0f})}}));
  auto sp = g.add_node("split_0", OpType::intern("Split"), {{c, 0}}, attrs({{"_rule", std::string("r1")}}), 2);
  g.add_output({sp, 0});
  for (auto set : {gk::KernelSet::Reference, gk::KernelSet::Fast}) {
    try {
      gk::run_graph(g, {}, {set, 1, 0, {}});
      ADD_FAILURE() << "ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.loc().file, "model.onnx");
      EXPECT_NE(e.message().find("node 'split_0' (Split)"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("rule 'r1'"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("rank"), std::string::npos) << e.message();
    }
  }
}

}  // namespace
