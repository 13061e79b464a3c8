// Small oneDNN calls run serially. Measured on examples/cnn_400.yaml (77 convolutions of
// at most 0.3 MFLOP on 16x16 planes): with two OpenMP threads on a loaded 2-core machine a
// run took 0.2-3 s against 1.5 ms on one thread, because every primitive's closing barrier
// waited for a team thread that had burnt its time slice spinning and was descheduled.
#include "fast/parallelism.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/openmp.h"

namespace graphfuse::kernels::fast {

namespace {

std::int64_t read_serial_flops() {
  // 0.5 MFLOP: every convolution of cnn_400 (at most 0.3) runs serially; of mobilenet_v2's
  // (0.5 to 40) only its smallest depthwise one, ~10 us of work on one core.
  constexpr std::int64_t kDefault = std::int64_t{1} << 19;
  const char* v = std::getenv("GRAPHFUSE_SERIAL_FLOPS");
  if (!v || !*v) return kDefault;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  // A malformed value keeps the default rather than silently parallelising everything.
  return end && *end == '\0' && n >= 0 ? static_cast<std::int64_t>(n) : kDefault;
}
}  // namespace

std::int64_t serial_flops() {
  static const std::int64_t flops = read_serial_flops();
  return flops;
}

std::int64_t serial_elements() { return serial_flops() / 32; }

namespace detail {
int team_threads() {
  return openmp::get_max_threads() ? std::max(1, openmp::get_max_threads()()) : 1;
}
bool run_team(unsigned threads, void (*fn)(void*), void* data) { return openmp::run_team(threads, fn, data); }
int thread_num() { return openmp::thread_num(); }
int team_size() { return openmp::team_size(); }
}  // namespace detail

SerialIf::SerialIf(bool small) {
  if (!small || !openmp::set_num_threads() || !openmp::get_max_threads()) return;
  const int current = openmp::get_max_threads()();
  if (current <= 1) return;
  previous_ = current;
  openmp::set_num_threads()(1);  // a per-thread setting (an OpenMP ICV): other threads are unaffected
}

SerialIf::~SerialIf() {
  if (previous_ > 0) openmp::set_num_threads()(previous_);
}

}  // namespace graphfuse::kernels::fast
