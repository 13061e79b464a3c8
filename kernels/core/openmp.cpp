// oneDNN is built against libgomp; graphfuse does not compile with -fopenmp itself, so the
// OpenMP entry points are found at run time in the runtime oneDNN loaded.
#include "core/openmp.h"

#include <dlfcn.h>

namespace graphfuse::kernels::openmp {

SetNumThreadsFn set_num_threads() {
  static const auto f = reinterpret_cast<SetNumThreadsFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  return f;
}

GetMaxThreadsFn get_max_threads() {
  static const auto f = reinterpret_cast<GetMaxThreadsFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return f;
}

bool run_team(unsigned threads, void (*fn)(void*), void* data) {
  // libgomp's entry point for a parallel region (what GCC emits for `omp parallel`).
  using ParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);
  static const auto parallel = reinterpret_cast<ParallelFn>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
  if (!parallel) return false;
  parallel(fn, data, threads, 0);
  return true;
}

int team_size() {
  using NumThreadsFn = int (*)();
  static const auto f = reinterpret_cast<NumThreadsFn>(dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
  return f ? f() : 1;
}

int thread_num() {
  using ThreadNumFn = int (*)();
  static const auto f = reinterpret_cast<ThreadNumFn>(dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
  return f ? f() : 0;
}

}  // namespace graphfuse::kernels::openmp
