// Which oneDNN calls run on the calling thread alone: small ones, where OpenMP's fork/join costs more than the work.
#pragma once

#include <cstdint>

namespace graphfuse::kernels::fast {

/// Work (floating-point operations, counting a multiply-add as two) below which a
/// convolution or matmul runs on the calling thread alone: 0.5 MFLOP, about 10 us on
/// one core. An OpenMP fork/join costs a few microseconds on an idle machine and
/// milliseconds on a busy one, where the barrier waits for a team thread the scheduler
/// parked. GRAPHFUSE_SERIAL_FLOPS overrides it (0: always use every thread).
std::int64_t serial_flops();
/// The same bound for data movement (pooling windows, layout reorders), in elements
/// touched: a float moved costs about what 32 flops do, so 16 Ki elements by default,
/// the grain below which our TBB loops run serially. Scales with serial_flops().
std::int64_t serial_elements();

/// For its lifetime, the OpenMP regions this thread starts (hence the oneDNN primitives
/// it builds and runs) use one thread if `small` is true; otherwise it does nothing.
/// oneDNN runs a one-thread primitive inline, without a parallel region or barrier.
/// Primitive caches key on omp_threads(), so a serial primitive is cached apart.
class SerialIf {
 public:
  explicit SerialIf(bool small);
  ~SerialIf();
  SerialIf(const SerialIf&) = delete;
  SerialIf& operator=(const SerialIf&) = delete;

 private:
  int previous_ = 0;  // the thread count to restore, 0 when nothing was changed
};

}  // namespace graphfuse::kernels::fast
