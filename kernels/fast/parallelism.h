// Which oneDNN calls run on the calling thread alone: small ones, where OpenMP's fork/join costs more than the work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>

namespace graphfuse::kernels::fast {

/// Work (floating-point operations, counting a multiply-add as two) below which a
/// convolution or matmul runs on the calling thread alone: 0.5 MFLOP, about 10 us on
/// one core. An OpenMP fork/join costs a few microseconds on an idle machine and
/// milliseconds on a busy one, where the barrier waits for a team thread the scheduler
/// parked. GRAPHFUSE_SERIAL_FLOPS overrides it (0: always use every thread).
std::int64_t serial_flops();
/// The same bound for data movement (pooling windows, layout reorders), in elements
/// touched: a float moved costs about what 32 flops do, so 16 Ki elements by default,
/// the grain below which our own loops (team_for) run serially. Scales with serial_flops().
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

/// f(begin, end) over [0, n) split into at most one contiguous chunk per thread of the
/// OpenMP team (omp_get_max_threads, which ThreadScope and SerialIf set), none smaller than
/// `grain`; on the calling thread alone when one chunk suffices or no OpenMP runtime is
/// loaded. The executor's own loops run this way rather than on a second thread pool: on a
/// 2-core machine oneDNN's team threads, still spinning after a primitive, kept a TBB
/// worker off the other core, and efficientnet_b0's QuickGelu ran no faster on 2 threads
/// than on 1 (6.5 ms against 6.1; 2.9 ms on the team).
/// The split depends only on n, grain and the thread count. An exception thrown by f is
/// rethrown here (the first one).
template <class F>
void team_for(std::int64_t n, std::int64_t grain, F f);

namespace detail {
int team_threads();
bool run_team(unsigned threads, void (*fn)(void*), void* data);
int thread_num();
int team_size();
}  // namespace detail

template <class F>
void team_for(std::int64_t n, std::int64_t grain, F f) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t chunks = std::min<std::int64_t>(detail::team_threads(), (n + grain - 1) / grain);
  if (chunks <= 1) return f(std::int64_t{0}, n);
  struct Job {
    F* f;
    std::int64_t n, chunks;
    std::exception_ptr error;
    bool failed = false;
  } job{&f, n, chunks, nullptr};
  const auto body = [](void* data) {
    auto* j = static_cast<Job*>(data);
    // The team may be smaller than asked (inside another parallel region it has one
    // thread): each member takes every team-size-th chunk, so all of them run.
    const std::int64_t team = std::max(1, detail::team_size());
    try {
      for (std::int64_t t = detail::thread_num(); t < j->chunks; t += team)
        (*j->f)(j->n * t / j->chunks, j->n * (t + 1) / j->chunks);
    } catch (...) {
      // Written by at most one thread that wins the flag; read after the team has joined.
      if (!__atomic_exchange_n(&j->failed, true, __ATOMIC_ACQ_REL)) j->error = std::current_exception();
    }
  };
  if (!detail::run_team(static_cast<unsigned>(chunks), body, &job)) return f(std::int64_t{0}, n);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace graphfuse::kernels::fast
