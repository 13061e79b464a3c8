// oneDNN's int8 matmul for the quantized products: u8/s8 rows with their zero point as a
// runtime attribute, s8 weights packed once per constant, s32 sums. As with the
// convolution (int8_conv.cpp), only the integer sums come from oneDNN; the kernels
// requantize them with the reference expression.
#include "fast/int8_matmul.h"

#include <string>

#include "core/int16_gemm.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

struct Int8MatmulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  std::mutex mu;  // guards the memories below (one call at a time per shape)
  memory src, wei, dst, zero_point;
  std::int32_t zero_point_value = 0;
};

std::shared_ptr<Int8MatmulEntry> build(std::int64_t m, std::int64_t k, std::int64_t n, bool signed_src) {
  const memory::desc src_md({m, k}, signed_src ? dt::s8 : dt::u8, tag::ab);
  const memory::desc dst_md({m, n}, dt::s32, tag::ab);
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::matmul::desc d(src_md, memory::desc({k, n}, dt::s8, tag::any), dst_md);
  dnnl::matmul::primitive_desc pd(d, attr, cpu_engine(), /*allow_empty=*/true);
  if (!pd || is_slow_impl(impl_of(pd))) return nullptr;
  auto e = std::make_shared<Int8MatmulEntry>();
  e->pd = pd;
  record_primitive({"int8 matmul", impl_of(pd), "m" + std::to_string(m) + "k" + std::to_string(k) + "n" + std::to_string(n)});
  e->prim = dnnl::matmul(pd);
  e->src = memory(src_md, cpu_engine(), DNNL_MEMORY_NONE);
  e->wei = memory(memory::desc({k, n}, dt::s8, tag::ab), cpu_engine(), DNNL_MEMORY_NONE);
  e->dst = memory(dst_md, cpu_engine(), DNNL_MEMORY_NONE);
  e->zero_point = memory(memory::desc({1}, dt::s32, tag::x), cpu_engine(), &e->zero_point_value);
  return e;
}

PrimitiveCache<Int8MatmulEntry>& cache() {
  static PrimitiveCache<Int8MatmulEntry> c;
  return c;
}

}  // namespace

bool int8_matmul_sums(const Tensor& a, std::int32_t a_zero_point, const Tensor& b, bool b_is_const, std::int32_t* acc) {
  if (b.dtype != DType::Int8 || b.shape.size() != 2 || a.shape.empty() || !a.has_data() || !b.has_data()) return false;
  if (a.dtype != DType::UInt8 && a.dtype != DType::Int8) return false;
  const std::int64_t k = b.shape[0], n = b.shape[1];
  if (a.shape.back() != k || k == 0 || n == 0 || k > kMaxInt16GemmDepth) return false;
  if (!has_vnni()) return false;
  const std::int64_t m = a.num_elements() / k;
  if (m == 0) return false;
  SerialIf serial(2 * m * k * n < serial_flops());  // before the key: it includes the thread count
  const bool signed_src = a.dtype == DType::Int8;
  const std::int64_t key_fields[] = {omp_threads(), m, k, n, signed_src};
  const std::string key(reinterpret_cast<const char*>(key_fields), sizeof key_fields);
  const std::shared_ptr<Int8MatmulEntry> e = cache().get(key, [&] { return build(m, k, n, signed_src); });
  if (!e) return false;

  std::lock_guard<std::mutex> lock(e->mu);
  auto& strm = cpu_stream();
  e->src.set_data_handle(const_cast<char*>(a.bytes().data()));
  e->wei.set_data_handle(const_cast<char*>(b.bytes().data()));
  const memory wei = e->pd.weights_desc() == e->wei.get_desc()
                         ? e->wei
                         : reordered_weights(e->wei, e->pd.weights_desc(),
                                             b_is_const ? std::shared_ptr<const void>(b.data) : nullptr);
  e->dst.set_data_handle(acc);
  e->zero_point_value = a_zero_point;
  e->prim.execute(strm, {{DNNL_ARG_SRC, e->src},
                         {DNNL_ARG_WEIGHTS, wei},
                         {DNNL_ARG_DST, e->dst},
                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, e->zero_point}});
  strm.wait();
  return true;
}

}  // namespace graphfuse::kernels::fast
