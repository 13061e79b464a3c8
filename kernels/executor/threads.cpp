// One thread count for both runtimes: TBB (our loops) and OpenMP (oneDNN's primitives).
#include <dlfcn.h>
#include <tbb/global_control.h>

#include <thread>

#include "graphfuse/kernels/executor.h"

namespace graphfuse::kernels {

namespace {
// oneDNN is built against libgomp; we do not compile with -fopenmp ourselves, so the
// OpenMP entry points are found at run time in the already-loaded runtime.
using SetFn = void (*)(int);
using GetFn = int (*)();
SetFn omp_set() {
  static const auto f = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return f;
}
GetFn omp_get() {
  static const auto f = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return f;
}
}  // namespace

ThreadScope::ThreadScope(int threads)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      previous_omp_(omp_get() ? omp_get()() : 0),
      tbb_control_(new tbb::global_control(tbb::global_control::max_allowed_parallelism,
                                           static_cast<std::size_t>(threads_))) {
  // The executor never nests the two (a oneDNN call never runs inside a TBB task), so
  // giving each the same count keeps the number of busy threads at `threads`.
  if (omp_set()) omp_set()(threads_);
}

ThreadScope::~ThreadScope() {
  if (omp_set() && previous_omp_ > 0) omp_set()(previous_omp_);
  delete static_cast<tbb::global_control*>(tbb_control_);
}

}  // namespace graphfuse::kernels
