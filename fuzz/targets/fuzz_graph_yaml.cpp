// libFuzzer target: the .yaml graph reader (parse_graph_yaml), then the checks of fuzz_common.h
// (validation, and save/load/save byte-identical in every format).
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  graphfuse::Graph g;
  if (fuzz::guarded("parse_graph_yaml", [&] { g = graphfuse::parse_graph_yaml(fuzz::bytes(data, size), "<fuzz>.yaml"); }))
    fuzz::check_graph(g);
  return 0;
}
