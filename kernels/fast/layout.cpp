// NCHW <-> NHWC reorders on oneDNN (threaded like the convolutions around them).
#include "fast/layout.h"

#include <cstring>
#include <sstream>

#include "core/util.h"
#include "fast/buffers.h"
#include "fast/dnnl_common.h"
#include "fast/parallelism.h"

namespace graphfuse::kernels::fast {

namespace {
struct ReorderEntry {
  dnnl::memory::desc src, dst;
  dnnl::reorder prim;
};
PrimitiveCache<ReorderEntry>& cache() {
  static PrimitiveCache<ReorderEntry> c;
  return c;
}
dnnl::memory::format_tag tag_of(Layout l) {
  return l == Layout::ChannelsLast ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw;
}
}  // namespace

namespace {

// n x c x h x w elements of `type` (element_size bytes) from one physical layout to the other.
void reorder_planes(const void* src, void* dst, dnnl::memory::data_type type, std::size_t element_size,
                    std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, Layout from, Layout to) {
  if (from == to || c == 1 || h * w == 1) {
    // The two orders coincide; only the bytes need to be there.
    if (src != dst) std::memcpy(dst, src, static_cast<std::size_t>(n * c * h * w) * element_size);
    return;
  }
  SerialIf serial(n * c * h * w < serial_elements());  // before the key
  std::ostringstream k;
  k << omp_threads() << 't' << n << ',' << c << ',' << h << ',' << w << ':' << static_cast<int>(from) << ':'
    << static_cast<int>(type);
  auto e = cache().get(k.str(), [&] {
    using dnnl::memory;
    memory::desc s({n, c, h, w}, type, tag_of(from));
    memory::desc d({n, c, h, w}, type, tag_of(to));
    auto r = std::make_shared<ReorderEntry>();
    r->src = s;
    r->dst = d;
    r->prim = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), s, cpu_engine(), d));
    return r;
  });
  auto& strm = cpu_stream();
  e->prim.execute(strm, {{DNNL_ARG_FROM, dnnl::memory(e->src, cpu_engine(), const_cast<void*>(src))},
                         {DNNL_ARG_TO, dnnl::memory(e->dst, cpu_engine(), dst)}});
  strm.wait();
}

}  // namespace

void convert_layout(const float* src, float* dst, std::int64_t n, std::int64_t c, std::int64_t h,
                    std::int64_t w, Layout from, Layout to) {
  reorder_planes(src, dst, dnnl::memory::data_type::f32, sizeof(float), n, c, h, w, from, to);
}

Tensor convert_layout(const Tensor& t, Layout from, Layout to) {
  if (t.shape.size() != 4) fail("layout conversion needs a 4-D tensor, got " + shape_str(t.shape));
  if (from == to) return t;
  const auto& s = t.shape;
  if (t.dtype == DType::UInt8 || t.dtype == DType::Int8) {
    Tensor y = alloc_unfilled(t.dtype, s);  // the reorder writes every element
    reorder_planes(t.bytes().data(), mut<char>(y),
                   t.dtype == DType::UInt8 ? dnnl::memory::data_type::u8 : dnnl::memory::data_type::s8, 1, s[0], s[1],
                   s[2], s[3], from, to);
    return y;
  }
  Tensor y = alloc_output_f32(s);  // the reorder writes every element
  convert_layout(f32(t, "input"), mut<float>(y), s[0], s[1], s[2], s[3], from, to);
  return y;
}

std::vector<Tensor> run_plain(const KernelFn& kernel, const KernelCall& c) {
  std::vector<Tensor> converted(c.inputs.size());
  KernelCall p = c;
  for (std::size_t k = 0; k < c.inputs.size(); ++k)
    if (c.inputs[k] && c.layout(k) == Layout::ChannelsLast) {
      converted[k] = convert_layout(*c.inputs[k], Layout::ChannelsLast, Layout::Plain);
      p.inputs[k] = &converted[k];
    }
  p.layouts.assign(c.inputs.size(), Layout::Plain);
  p.prefer_channels_last = false;
  c.out_layout = Layout::Plain;
  return kernel(p);
}

}  // namespace graphfuse::kernels::fast
