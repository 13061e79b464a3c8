// oneDNN's int8 matmul for the quantized products: u8/s8 rows with their zero point as a
// runtime attribute, s8 weights packed once per constant, s32 sums. As with the
// convolution (int8_conv.cpp), only the integer sums come from oneDNN; the kernels
// requantize them with the reference expression.
#include "fast/int8_matmul.h"

#include <string>

#include "core/int16_gemm.h"
#include "fast/dnnl_common.h"
#include "fast/impl_log.h"
#include "fast/int8_primitive.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

using Int8MatmulEntry = Int8Primitive<dnnl::matmul>;

std::shared_ptr<Int8MatmulEntry> build(std::int64_t m, std::int64_t k, std::int64_t n, bool signed_src, bool b_transposed) {
  const memory::desc src_md({m, k}, signed_src ? dt::s8 : dt::u8, tag::ab);
  const memory::desc dst_md({m, n}, dt::s32, tag::ab);
  dnnl::matmul::desc d(src_md, memory::desc({k, n}, dt::s8, tag::any), dst_md);
  dnnl::matmul::primitive_desc pd(d, runtime_source_zero_point(), cpu_engine(), /*allow_empty=*/true);
  if (!pd || is_slow_impl(impl_of(pd))) return nullptr;
  record_primitive({"int8 matmul", impl_of(pd), "m" + std::to_string(m) + "k" + std::to_string(k) + "n" + std::to_string(n)});
  // b as stored: K x N rows, or N x K (element (k, n) at n * K + k).
  const memory::desc user_b = b_transposed ? memory::desc({k, n}, dt::s8, memory::dims{1, k})
                                           : memory::desc({k, n}, dt::s8, tag::ab);
  return std::make_shared<Int8MatmulEntry>(pd, src_md, user_b, dst_md);
}

PrimitiveCache<Int8MatmulEntry>& cache() {
  static PrimitiveCache<Int8MatmulEntry> c;
  return c;
}

}  // namespace

bool int8_matmul_sums(const Tensor& a, std::int32_t a_zero_point, const Tensor& b, bool b_is_const, std::int32_t* acc,
                      bool b_transposed) {
  if (b.dtype != DType::Int8 || b.shape.size() != 2 || a.shape.empty() || !a.has_data() || !b.has_data()) return false;
  if (a.dtype != DType::UInt8 && a.dtype != DType::Int8) return false;
  const std::int64_t k = b.shape[b_transposed ? 1 : 0], n = b.shape[b_transposed ? 0 : 1];
  if (a.shape.back() != k || k == 0 || n == 0 || k > kMaxInt16GemmDepth) return false;
  if (!has_vnni()) return false;
  const std::int64_t m = a.num_elements() / k;
  if (m == 0) return false;
  SerialIf serial(2 * m * k * n < serial_flops());  // before the key: it includes the thread count
  const bool signed_src = a.dtype == DType::Int8;
  const std::int64_t key_fields[] = {omp_threads(), m, k, n, signed_src, b_transposed};
  const std::string key(reinterpret_cast<const char*>(key_fields), sizeof key_fields);
  const std::shared_ptr<Int8MatmulEntry> e = cache().get(key, [&] { return build(m, k, n, signed_src, b_transposed); });
  if (!e) return false;

  e->run(a.bytes().data(), b.bytes().data(), b_is_const ? std::shared_ptr<const void>(b.data) : nullptr, a_zero_point,
         acc);
  return true;
}

}  // namespace graphfuse::kernels::fast
