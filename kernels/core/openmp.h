// The OpenMP runtime oneDNN brings (libgomp), reached without compiling with -fopenmp.
#pragma once

namespace graphfuse::kernels::openmp {

/// omp_set_num_threads / omp_get_max_threads of the already-loaded OpenMP runtime, looked
/// up once at run time; nullptr when no OpenMP runtime is loaded.
using SetNumThreadsFn = void (*)(int);
using GetMaxThreadsFn = int (*)();
SetNumThreadsFn set_num_threads();
GetMaxThreadsFn get_max_threads();

/// Runs fn(data) on every thread of a new team of `threads` (the caller among them) of that
/// runtime, as `#pragma omp parallel num_threads(threads)` does, and returns once all have;
/// `thread_num` tells a member its index. The team is the one oneDNN's primitives use, so
/// loops run this way find its threads awake instead of competing with them for the cores.
/// False (nothing run) when no OpenMP runtime is loaded.
bool run_team(unsigned threads, void (*fn)(void*), void* data);
/// omp_get_thread_num() inside run_team's fn (0 outside a team).
int thread_num();
/// omp_get_num_threads(): the size of the team running run_team's fn, which can be smaller
/// than asked (1 inside another parallel region).
int team_size();

}  // namespace graphfuse::kernels::openmp
