// The ISA line, the log of built primitives and the per-node reference fall-backs.
#include "fast/impl_log.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <utility>

namespace graphfuse::kernels {

namespace {

const char* isa_name(dnnl::cpu_isa isa) {
  using I = dnnl::cpu_isa;
  switch (isa) {
    case I::sse41: return "sse41";
    case I::avx: return "avx";
    case I::avx2: return "avx2";
    case I::avx2_vnni: return "avx2_vnni";
    case I::avx512_mic: return "avx512_mic";
    case I::avx512_mic_4ops: return "avx512_mic_4ops";
    case I::avx512_core: return "avx512_core";
    case I::avx512_core_vnni: return "avx512_core_vnni";
    case I::avx512_core_bf16: return "avx512_core_bf16";
    case I::avx512_core_amx: return "avx512_core_amx";
    default: return "no vector ISA";  // cpu_isa::all never comes back as the effective one
  }
}

// The CPU's widest vector set as oneDNN would name its family (coarse: what matters for
// "this figure was restricted" is AVX-512 vs AVX2 vs older).
const char* cpu_family() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  if (__builtin_cpu_supports("sse4.1")) return "SSE4.1";
  return "no SSE4.1";
}

struct Log {
  std::mutex mu;
  std::vector<PrimitiveRecord> built;
  std::vector<ReferenceFallback> fallbacks;
  std::set<std::pair<std::string, std::string>> seen;  // (node, shape) already in fallbacks
};

Log& log() {
  static Log l;
  return l;
}

thread_local std::string_view t_node_id, t_node_op;

}  // namespace

std::string onednn_isa() {
  std::string s = isa_name(dnnl::get_effective_cpu_isa());
  const char* max = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!max || !*max) max = std::getenv("DNNL_MAX_CPU_ISA");
  std::string note;
  if (max && *max) note = std::string("ONEDNN_MAX_CPU_ISA=") + max + "; ";
  note += std::string("this CPU has ") + cpu_family();
  return s + " (" + note + ")";
}

std::vector<PrimitiveRecord> built_primitives() {
  std::lock_guard<std::mutex> lock(log().mu);
  return log().built;
}

std::vector<ReferenceFallback> reference_fallbacks() {
  std::lock_guard<std::mutex> lock(log().mu);
  return log().fallbacks;
}

bool is_reference_impl(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

namespace fast {

bool is_slow_impl(std::string_view impl) {
  return impl.substr(0, 3) == "ref" || impl.substr(0, 7) == "simple_";
}

std::string impl_of(const dnnl::primitive_desc_base& pd) {
  const char* s = pd.impl_info_str();
  return s ? s : "";
}

void record_primitive(PrimitiveRecord r) {
  std::lock_guard<std::mutex> lock(log().mu);
  log().built.push_back(std::move(r));
}

void note_reference_run(const PrimitiveRecord& r) {
  Log& l = log();
  std::lock_guard<std::mutex> lock(l.mu);
  if (!l.seen.emplace(std::string(t_node_id), r.shape).second) return;
  l.fallbacks.push_back({std::string(t_node_id), std::string(t_node_op), r});
}

NodeScope::NodeScope(std::string_view id, std::string_view op) : prev_id_(t_node_id), prev_op_(t_node_op) {
  t_node_id = id;
  t_node_op = op;
}

NodeScope::~NodeScope() {
  t_node_id = prev_id_;
  t_node_op = prev_op_;
}

}  // namespace fast
}  // namespace graphfuse::kernels
