// Plugs ONNX into load_graph/save_graph when graphfuse::onnx is linked (engine/io/format_hooks.h),
// and gives the rewriter libonnx's per-node type inference for ONNX graphs (onnx_node_types.h).
#include "graphfuse/onnx.h"
#include "io/format_hooks.h"
#include "io/onnx_node_types.h"

namespace {
// raise_onnx_opset as the line the rewrite's report prints.
std::string raise_opset_line(graphfuse::Graph& g, std::int64_t version) {
  const graphfuse::OpsetRaise r = graphfuse::raise_onnx_opset(g, version);
  if (r.from == 0 || r.from >= version) return {};
  if (!r.kept_by.empty())
    return "ONNX opset kept at " + std::to_string(r.from) + " (the target asks for " + std::to_string(version) + "): " + r.kept_by;
  return "ONNX opset raised from " + std::to_string(r.from) + " to " + std::to_string(r.to) + " for the target (no node changes meaning)";
}
}  // namespace

// Runs at static initialization. Static-library members are linked only when something
// refers to them, so graphfuse::onnx's link interface names this symbol (--undefined):
// linking the library is then enough, with no call for the program to make.
extern "C" {
extern const bool graphfuse_onnx_format_anchor;
const bool graphfuse_onnx_format_anchor =
    graphfuse::io_hooks::register_onnx_format({&graphfuse::load_onnx, &graphfuse::save_onnx, &raise_opset_line}) &&
    graphfuse::register_type_inference(&graphfuse::onnx_io::make_onnx_type_inference);
}
