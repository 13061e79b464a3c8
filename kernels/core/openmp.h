// The OpenMP runtime oneDNN brings (libgomp), reached without compiling with -fopenmp.
#pragma once

namespace graphfuse::kernels::openmp {

/// omp_set_num_threads / omp_get_max_threads of the already-loaded OpenMP runtime, looked
/// up once at run time; nullptr when no OpenMP runtime is loaded.
using SetNumThreadsFn = void (*)(int);
using GetMaxThreadsFn = int (*)();
SetNumThreadsFn set_num_threads();
GetMaxThreadsFn get_max_threads();

}  // namespace graphfuse::kernels::openmp
