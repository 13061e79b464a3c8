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

}  // namespace graphfuse::kernels::openmp
