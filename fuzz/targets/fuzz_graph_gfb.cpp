// libFuzzer target: the .gfb graph reader (parse_graph_binary), then the checks of fuzz_common.h
// (validation, and save/load/save byte-identical in every format).
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  graphfuse::Graph g;
  if (fuzz::guarded("parse_graph_binary", [&] { g = graphfuse::parse_graph_binary(fuzz::bytes(data, size), "<fuzz>.gfb"); }))
    fuzz::check_graph(g);
  return 0;
}
