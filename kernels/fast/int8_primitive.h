// What the int8 convolution and matmul (int8_conv.cpp, int8_matmul.cpp) share: a cached
// oneDNN primitive with its source zero point given at run time, and the call that runs it
// on a source, packed weights and an int32 destination.
#pragma once

#include <cstdint>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

#include "fast/dnnl_common.h"

namespace graphfuse::kernels::fast {

/// Attributes of an int8 primitive whose source zero point is a run-time argument.
dnnl::primitive_attr runtime_source_zero_point();

/// A built int8 primitive (oneDNN's convolution_forward or matmul) and the memories a call
/// re-points at its buffers. The source may take a reorder into the primitive's layout.
template <class Primitive>
struct Int8Primitive {
  typename Primitive::primitive_desc pd;
  Primitive prim;
  std::mutex mu;  // guards everything below (one call at a time per shape)
  dnnl::memory src, wei, dst;  // the caller's buffers
  std::optional<dnnl::memory> src_buf;  // the source in the primitive's layout, when it differs
  std::optional<dnnl::reorder> to_src_buf;
  std::int32_t zero_point_value = 0;
  dnnl::memory zero_point;  // one s32 holding zero_point_value

  /// Makes the primitive and the memories; the user's source, weights and destination
  /// layouts as given.
  Int8Primitive(const typename Primitive::primitive_desc& built, const dnnl::memory::desc& user_src,
                const dnnl::memory::desc& user_wei, const dnnl::memory::desc& user_dst)
      : pd(built),
        prim(built),
        src(user_src, cpu_engine(), DNNL_MEMORY_NONE),
        wei(user_wei, cpu_engine(), DNNL_MEMORY_NONE),
        dst(user_dst, cpu_engine(), DNNL_MEMORY_NONE),
        zero_point(dnnl::memory::desc({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::x), cpu_engine(),
                   &zero_point_value) {
    if (built.src_desc() != user_src) {
      src_buf = dnnl::memory(built.src_desc(), cpu_engine());
      to_src_buf = dnnl::reorder(src, *src_buf);
    }
  }

  /// dst = the int32 sums of (src - source_zero_point) and the weights. `weights_owner`
  /// (constant weights) keeps their packed copy for later calls. Takes the lock.
  void run(const void* source, const void* weights, const std::shared_ptr<const void>& weights_owner,
           std::int32_t source_zero_point, std::int32_t* sums) {
    std::lock_guard<std::mutex> lock(mu);
    auto& strm = cpu_stream();
    src.set_data_handle(const_cast<void*>(source));
    if (to_src_buf) to_src_buf->execute(strm, src, *src_buf);
    wei.set_data_handle(const_cast<void*>(weights));
    const dnnl::memory packed = pd.weights_desc() == wei.get_desc() ? wei : reordered_weights(wei, pd.weights_desc(), weights_owner);
    dst.set_data_handle(sums);
    zero_point_value = source_zero_point;
    prim.execute(strm, {{DNNL_ARG_SRC, src_buf ? *src_buf : src},
                        {DNNL_ARG_WEIGHTS, packed},
                        {DNNL_ARG_DST, dst},
                        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_point}});
    strm.wait();
  }
};

}  // namespace graphfuse::kernels::fast
