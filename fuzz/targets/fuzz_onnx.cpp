// libFuzzer target: ONNX import from memory (parse_onnx: protobuf parse, checks, ONNX shape
// inference, conversion). An accepted model must validate, export (write_onnx), import again,
// and export to the same bytes; it is also checked in the other formats (fuzz_common.h).
#include "fuzz_common.h"
#if __has_include("graphfuse/onnx.h")
#include "graphfuse/onnx.h"  // graphfuse::onnx, with parse_onnx / write_onnx from memory
#else
// Before ONNX became its own library: only files, so go through one in /dev/shm or /tmp.
#include <unistd.h>

#include <cstdio>
namespace graphfuse {
inline std::string onnx_temp_path() {
  static const std::string p = (access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : "/tmp/") +
                               std::string("graphfuse-fuzz-") + std::to_string(getpid()) + ".onnx";
  return p;
}
inline Graph parse_onnx(std::string_view bytes, const std::string&, const std::string&) {
  write_file_atomic(onnx_temp_path(), bytes);
  return load_onnx(onnx_temp_path());
}
inline std::string write_onnx(const Graph& g) {
  save_onnx(g, onnx_temp_path());
  return read_file(onnx_temp_path());
}
}  // namespace graphfuse
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  graphfuse::Graph g;
  // model_dir is a folder that does not exist: external tensor data names nothing to read.
  if (!fuzz::guarded("parse_onnx", [&] { g = graphfuse::parse_onnx(fuzz::bytes(data, size), "<fuzz>.onnx", "/nonexistent-fuzz-dir"); }))
    return 0;
  fuzz::check_graph(g);
  if (fuzz::roundtrip_on())
    fuzz::check_roundtrip(g, "ONNX", [](const graphfuse::Graph& x) { return graphfuse::write_onnx(x); },
                          [](const std::string& s) { return graphfuse::parse_onnx(s, "<roundtrip>.onnx", "/nonexistent-fuzz-dir"); });
  return 0;
}
