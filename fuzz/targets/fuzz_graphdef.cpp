// libFuzzer target: TensorFlow GraphDef (.pb) from memory (parse_graphdef: protobuf parse,
// names, inputs, cycles apart from a TF1 loop's NextIteration -> Merge edge, attributes,
// tensors). An accepted graph must validate, write as a GraphDef that reads again, and write
// the same bytes the second time; it is also checked in the other formats (fuzz_common.h).
#include "fuzz_common.h"
#include "graphfuse/tensorflow.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  graphfuse::Graph g;
  if (!fuzz::guarded("parse_graphdef", [&] { g = graphfuse::parse_graphdef(fuzz::bytes(data, size), "<fuzz>.pb"); }))
    return 0;
  fuzz::check_graph(g);
  if (fuzz::roundtrip_on())
    fuzz::check_roundtrip(g, "GraphDef", [](const graphfuse::Graph& x) { return graphfuse::write_graphdef(x); },
                          [](const std::string& s) { return graphfuse::parse_graphdef(s, "<roundtrip>.pb"); });
  return 0;
}
