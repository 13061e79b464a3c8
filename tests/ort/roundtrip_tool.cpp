// onnx_roundtrip: imports an ONNX model into a Graph and exports it again, with timings.
// Used by the ort_roundtrip test (tests/ort/ort.cmake) and to measure io speed by hand.
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.onnx OUT.onnx\n", argv[0]);
    return 2;
  }
  try {
    using clock = std::chrono::steady_clock;
    const std::string in = argv[1], out = argv[2];
    auto t0 = clock::now();
    onnx::ModelProto model = graphfuse::onnx_io::read_model_proto(in);
    double parse_ms = ms_since(t0);
    t0 = clock::now();
    graphfuse::Graph g = graphfuse::onnx_io::graph_from_model(
        model, in, std::filesystem::path(in).parent_path().string());
    double convert_ms = ms_since(t0);
    t0 = clock::now();
    onnx::ModelProto back = graphfuse::onnx_io::model_from_graph(g);
    double build_ms = ms_since(t0);
    t0 = clock::now();
    graphfuse::save_onnx(g, out);
    double save_ms = ms_since(t0);
    std::printf("%s: %zu nodes; import %.1f ms (parse %.1f + convert %.1f); export %.1f ms "
                "(build proto alone %.1f)\n",
                in.c_str(), g.size(), parse_ms + convert_ms, parse_ms, convert_ms, save_ms, build_ms);
    return 0;
  } catch (const graphfuse::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
