// scale_bench's shared driver pieces: child processes, medians, table cells.
#include "scale_run.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "graphfuse/error.h"

namespace graphfuse::bench {

namespace {
std::string quote(const std::string& s) { return "'" + s + "'"; }
}  // namespace

/// Runs `self --case ...` and returns the figures from its RESULT line.
Figures run_child(const std::string& self, const std::string& name, const CaseArgs& a) {
  std::string cmd = quote(self) + " --case " + name + " --nodes " + std::to_string(a.nodes) +
                    " --threads " + std::to_string(a.threads) + " --reps " + std::to_string(a.reps) + " --shape " + a.shape;
  for (const auto& r : a.rules) cmd += " --rules " + quote(r);
  if (!a.input.empty()) cmd += " --input " + quote(a.input);
  if (!a.output.empty()) cmd += " --output " + quote(a.output);
  if (!a.form.empty()) cmd += " --form " + a.form;
  if (!a.mlir.empty()) cmd += " --mlir " + quote(a.mlir);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw Error("cannot run " + cmd);
  Figures f;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    if (line.rfind("RESULT ", 0) != 0) continue;
    std::stringstream ss(line.substr(7));
    for (std::string kv; ss >> kv;) {
      auto eq = kv.find('=');
      if (eq != std::string::npos) f[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
    }
  }
  if (::pclose(p) != 0 || f.empty()) throw Error("failed: " + cmd);
  return f;
}

Figures median_of(const std::vector<Figures>& runs) {
  Figures out;
  for (const auto& [key, unused] : runs.front()) {
    std::vector<double> xs;
    for (const Figures& r : runs) xs.push_back(r.count(key) ? r.at(key) : 0.0);
    std::sort(xs.begin(), xs.end());
    std::size_t n = xs.size();
    out[key] = n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
    if (key == "total_ms") {
      out["total_ms_min"] = xs.front();
      out["total_ms_max"] = xs.back();
    }
    (void)unused;
  }
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string fmt(double x, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << x;
  return s.str();
}

std::string spread(Figures& f, const std::string& key, int digits) {
  return fmt(f[key], digits) + " (" + fmt(f[key + "_min"], digits) + "-" + fmt(f[key + "_max"], digits) + ")";
}

}  // namespace graphfuse::bench
