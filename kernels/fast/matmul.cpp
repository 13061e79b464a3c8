// Fast MatMul / Gemm / FusedMatMul on oneDNN's matmul primitive, cached per shape.
#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>

#include "core/matmul_ops.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using dt = memory::data_type;

// How a MatMulSpec maps onto one primitive call.
struct Plan {
  std::int64_t rows = 0;         ///< M, or batches * M when the batch folds into M
  std::int64_t ba = 1, bb = 1;   ///< batch extent of A and B (1 = broadcast or none)
  std::int64_t sa = 0, sb = 0;   ///< element stride between batches
  bool batched = false;          ///< 3-D primitive
  bool bias = false;             ///< Gemm C as oneDNN bias (a [N] row, beta 1, alpha 1)
  bool sum = false;              ///< Gemm C pre-filled into y, added by a sum post-op
  bool const_b = false;          ///< reorder B into oneDNN's preferred layout once
};

struct MatMulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory::desc a_md, b_md, y_md, bias_md;
  bool reorder_b = false;
  PrimitiveRecord record;
  bool reference = false;
};

// Uniform stride between batch offsets, or -1 when they follow no single stride.
std::int64_t uniform_stride(const std::vector<std::int64_t>& off) {
  if (off.size() < 2) return 0;
  const std::int64_t s = off[1] - off[0];
  for (std::size_t i = 0; i < off.size(); ++i)
    if (off[i] != static_cast<std::int64_t>(i) * s) return -1;
  return s;
}

memory::desc matrix_desc(std::int64_t batch, std::int64_t batch_stride, std::int64_t r,
                         std::int64_t c, bool trans, bool batched) {
  // A logical r x c matrix stored row-major, or stored c x r when trans.
  const memory::dims strides2 = trans ? memory::dims{1, r} : memory::dims{c, 1};
  if (!batched) return memory::desc({r, c}, dt::f32, strides2);
  return memory::desc({batch, r, c}, dt::f32,
                      {batch == 1 ? r * c : batch_stride, strides2[0], strides2[1]});
}

// Constant weights in the plain row-major layout oneDNN chose, copied once with their rows
// moved off multiples of 1 KiB (weights_row_stride; the copy lives as long as the weights,
// as a convolution's reordered weights do). Empty when the chosen layout is not row-major
// (blocked, or B transposed) or its rows need no padding.
std::optional<memory::desc> padded_plain_weights(const memory::desc& chosen, std::int64_t k, std::int64_t n) {
  const std::int64_t ld = weights_row_stride(n);
  if (chosen == memory::desc({k, n}, dt::f32, memory::format_tag::ab) && ld != n)
    return memory::desc({k, n}, dt::f32, memory::dims{ld, 1});
  return std::nullopt;
}

std::shared_ptr<MatMulEntry> build(const MatMulSpec& s, const Plan& pl) {
  const std::int64_t nb = s.batches();
  memory::desc a_md = matrix_desc(pl.ba, pl.sa, pl.rows, s.k, s.trans_a, pl.batched);
  memory::desc b_md = matrix_desc(pl.bb, pl.sb, s.k, s.n, s.trans_b, pl.batched);
  memory::desc y_md = pl.batched ? memory::desc({nb, s.m, s.n}, dt::f32, memory::format_tag::abc)
                                 : memory::desc({pl.rows, s.n}, dt::f32, memory::format_tag::ab);
  memory::desc bias_md = pl.bias ? (pl.batched ? memory::desc({1, 1, s.n}, dt::f32, memory::format_tag::abc)
                                               : memory::desc({1, s.n}, dt::f32, memory::format_tag::ab))
                                 : memory::desc();
  // Constant weights: let oneDNN choose its layout; they are reordered once.
  memory::desc b_prim = pl.const_b ? memory::desc(b_md.dims(), dt::f32, memory::format_tag::any) : b_md;
  dnnl::primitive_attr attr;
  if (s.alpha != 1.0f) attr.set_output_scales(0, {s.alpha});
  dnnl::post_ops po;
  if (pl.sum) po.append_sum(1.0f);
  append_activation(po, s.act);  // after the sum: act(alpha*A*B + beta*C)
  attr.set_post_ops(po);
  auto make_pd = [&](const memory::desc& weights) {
    dnnl::matmul::desc d = pl.bias ? dnnl::matmul::desc(a_md, weights, bias_md, y_md)
                                   : dnnl::matmul::desc(a_md, weights, y_md);
    return dnnl::matmul::primitive_desc(d, attr, cpu_engine());
  };
  dnnl::matmul::primitive_desc pd = make_pd(b_prim);
  if (pl.const_b && !pl.batched) {
    if (auto padded = padded_plain_weights(pd.weights_desc(), s.k, s.n)) pd = make_pd(*padded);
  }
  auto e = std::make_shared<MatMulEntry>();
  e->pd = pd;
  std::string shape = pl.batched ? std::to_string(std::max(pl.ba, pl.bb)) + "x" : "";
  shape += std::to_string(pl.rows) + "x" + std::to_string(s.k) + ":" + std::to_string(s.k) + "x" + std::to_string(s.n);
  e->record = {"matmul", impl_of(pd), shape};
  e->reference = is_reference_impl(e->record.impl);
  record_primitive(e->record);
  e->prim = dnnl::matmul(pd);
  e->a_md = a_md;
  e->b_md = b_md;
  e->y_md = y_md;
  e->bias_md = bias_md;
  e->reorder_b = pd.weights_desc() != b_md;
  return e;
}

PrimitiveCache<MatMulEntry>& cache() {
  static PrimitiveCache<MatMulEntry> c;
  return c;
}

void run_plan(const MatMulSpec& s, const Plan& pl, const float* a, const float* b,
              const float* c, float* y, const std::shared_ptr<const void>& b_owner) {
  const std::int64_t products = pl.batched ? std::max(pl.ba, pl.bb) : 1;
  SerialIf serial(2 * products * pl.rows * s.n * s.k < serial_flops());  // before the key
  std::ostringstream k;
  k << omp_threads() << 't' << pl.rows << ',' << s.m << ',' << s.n << ',' << s.k << ',' << s.trans_a << s.trans_b << ','
    << s.alpha << ':' << s.batches() << ',' << pl.ba << ',' << pl.bb << ',' << pl.sa << ','
    << pl.sb << ',' << pl.batched << pl.bias << pl.sum << pl.const_b << ':' << static_cast<int>(s.act.kind)
    << ',' << s.act.alpha << ',' << s.act.beta;
  auto e = cache().get(k.str(), [&] { return build(s, pl); });
  if (e->reference) note_reference_run(e->record);
  auto& strm = cpu_stream();
  memory bm = wrap(e->b_md, b);
  if (e->reorder_b) bm = reordered_weights(bm, e->pd.weights_desc(), b_owner);
  std::unordered_map<int, memory> args{
      {DNNL_ARG_SRC, wrap(e->a_md, a)}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, wrap(e->y_md, y)}};
  if (pl.bias) args.emplace(DNNL_ARG_BIAS, wrap(e->bias_md, c));
  e->prim.execute(strm, args);
  strm.wait();
}

}  // namespace

void fast_matmul(const MatMulSpec& s, const float* a, const float* b, const float* c, float* y,
                 std::shared_ptr<const void> b_owner) {
  Plan pl;
  const std::int64_t nb = s.batches();
  const std::int64_t sa = uniform_stride(s.a_off), sb = uniform_stride(s.b_off);
  pl.bias = s.has_c && s.c_rs == 0 && s.c_cs == 1 && s.beta == 1.0f && s.alpha == 1.0f;
  pl.sum = s.has_c && !pl.bias;
  if (pl.sum) {
    // y = beta * C (broadcast); the primitive's sum post-op adds alpha * A * B to it.
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) y[i * s.n + j] = s.beta * c[i * s.c_rs + j * s.c_cs];
  }
  if (nb <= 1 || (sb == 0 && sa == s.m * s.k && !s.trans_a)) {
    // One 2-D product; a batch over shared weights folds into the rows.
    pl.rows = s.m * std::max<std::int64_t>(nb, 1);
    pl.const_b = b_owner != nullptr;
    run_plan(s, pl, a, b, c, y, b_owner);
    return;
  }
  if (sa >= 0 && sb >= 0) {
    pl.batched = true;
    pl.rows = s.m;
    pl.ba = sa == 0 ? 1 : nb;
    pl.bb = sb == 0 ? 1 : nb;
    pl.sa = sa;
    pl.sb = sb;
    run_plan(s, pl, a, b, c, y, nullptr);
    return;
  }
  // Irregular broadcasting: one 2-D product per batch entry.
  pl.rows = s.m;
  for (std::int64_t i = 0; i < nb; ++i)
    run_plan(s, pl, a + s.a_off[i], b + s.b_off[i], c, y + i * s.m * s.n, nullptr);
}

}  // namespace graphfuse::kernels::fast

namespace graphfuse::kernels {
void register_fast_matmul(KernelRegistry& r) { register_matmul_ops(r, fast::fast_matmul); }
}  // namespace graphfuse::kernels
