// Records which oneDNN implementation each fast-kernel primitive got, and reference fall-backs per node.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <string_view>

#include "graphfuse/kernels/isa.h"

namespace graphfuse::kernels::fast {

/// Implementations the fast kernels try to avoid by changing layouts: oneDNN's reference
/// loops and its "simple" plain-layout pooling (simple_nchw: 20 ms where jit takes
/// 0.25 ms for squeezenet's 128x55x55 max pool under AVX2).
bool is_slow_impl(std::string_view impl);

/// The implementation name of a built primitive descriptor.
std::string impl_of(const dnnl::primitive_desc_base& pd);

/// Appends a built primitive to built_primitives().
void record_primitive(PrimitiveRecord r);

/// Called by a fast kernel each time it runs a reference implementation: records the
/// current node (see NodeScope) once.
void note_reference_run(const PrimitiveRecord& r);

/// For its lifetime, kernels on this thread run for node `id` (the executor sets it
/// around every kernel call, so a reference fall-back can name its node).
class NodeScope {
 public:
  NodeScope(std::string_view id, std::string_view op);
  ~NodeScope();
  NodeScope(const NodeScope&) = delete;
  NodeScope& operator=(const NodeScope&) = delete;

 private:
  std::string_view prev_id_, prev_op_;
};

}  // namespace graphfuse::kernels::fast
