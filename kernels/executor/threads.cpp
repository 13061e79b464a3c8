// One thread count for both runtimes: TBB (our loops) and OpenMP (oneDNN's primitives).
#include <tbb/global_control.h>

#include <thread>

#include "core/openmp.h"
#include "graphfuse/kernels/executor.h"

namespace graphfuse::kernels {

ThreadScope::ThreadScope(int threads)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))),
      previous_omp_(openmp::get_max_threads() ? openmp::get_max_threads()() : 0),
      tbb_control_(new tbb::global_control(tbb::global_control::max_allowed_parallelism,
                                           static_cast<std::size_t>(threads_))) {
  // The executor never nests the two (a oneDNN call never runs inside a TBB task), so
  // giving each the same count keeps the number of busy threads at `threads`.
  if (openmp::set_num_threads()) openmp::set_num_threads()(threads_);
}

ThreadScope::~ThreadScope() {
  if (openmp::set_num_threads() && previous_omp_ > 0) openmp::set_num_threads()(previous_omp_);
  delete static_cast<tbb::global_control*>(tbb_control_);
}

}  // namespace graphfuse::kernels
