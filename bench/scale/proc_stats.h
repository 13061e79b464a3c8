// Process measurements for the scale benchmarks: wall clock, resident memory, load average.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <string>

namespace graphfuse::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// User + system CPU time of getrusage(`who`), in milliseconds.
inline double rusage_cpu_ms(int who) {
  rusage u{};
  getrusage(who, &u);
  auto ms = [](timeval t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

/// CPU time (user + system, all threads) the process has used, in milliseconds. Less
/// disturbed than wall time when other jobs share the cores.
inline double cpu_ms() { return rusage_cpu_ms(RUSAGE_SELF); }

/// Page faults the process has taken that needed no disk read (first touches of memory):
/// a fault is about 1-2 us of kernel time, so a load's count says what its memory costs.
inline double minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_minflt);
}

/// CPU time of the calling thread alone, in milliseconds: with several threads, what the
/// caller spent next to what the others did (cpu_ms() minus this).
inline double thread_cpu_ms() { return rusage_cpu_ms(RUSAGE_THREAD); }

/// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); 0 when unavailable.
inline std::size_t proc_status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size() + 1, field + ":") != 0) continue;
    return std::stoull(line.substr(field.size() + 1)) * 1024;  // reported in kB
  }
  return 0;
}

/// Peak resident set since the process started (or since reset_peak_rss()).
inline std::size_t peak_rss() { return proc_status_bytes("VmHWM"); }
inline std::size_t current_rss() { return proc_status_bytes("VmRSS"); }

/// Resets VmHWM to the current RSS (Linux >= 4.0), so a phase's peak can be read alone.
/// Returns false when the kernel refuses; peaks then include earlier phases.
inline bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// The 1-minute load average, to tell quiet runs from runs next to a compiler.
inline double load_average() {
  std::ifstream in("/proc/loadavg");
  double l = 0;
  in >> l;
  return l;
}

}  // namespace graphfuse::bench
