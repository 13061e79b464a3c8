// Binary GraphDef files (.pb) and the graphfuse::tf library's registration with
// load_graph/save_graph (engine/io/format_hooks.h).
#include <climits>

#include "graphfuse/io.h"
#include "graphfuse/tensorflow.h"
#include "io/format_hooks.h"
#include "io/graphdef_convert.h"

namespace graphfuse {

Graph parse_graphdef(std::string_view bytes, const std::string& name) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(SourceLoc{name}, "a GraphDef over 2 GB cannot be read (protobuf's limit)");
  tf::GraphDef gd;
  if (!gd.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(SourceLoc{name}, "not a valid GraphDef: protobuf parsing failed (truncated, damaged, or not a GraphDef)");
  return tf_io::graphdef_to_graph(gd, name);
}

std::string write_graphdef(const Graph& g) {
  std::string out;
  if (!tf_io::graph_to_graphdef(g).SerializeToString(&out))
    throw Error(SourceLoc{g.source_file}, "the GraphDef would be over 2 GB, which protobuf cannot write");
  return out;
}

Graph load_graphdef(const std::string& path) {
  std::string bytes = read_file(path);
  return parse_graphdef(bytes, path);
}

void save_graphdef(const Graph& g, const std::string& path) { write_file_atomic(path, write_graphdef(g)); }

}  // namespace graphfuse

// Runs at static initialization; graphfuse::tf's link interface names this symbol
// (--undefined) so that linking the library is enough, as for graphfuse::onnx.
extern "C" {
extern const bool graphfuse_tf_format_anchor;
const bool graphfuse_tf_format_anchor = graphfuse::io_hooks::register_tf_format(
    {&graphfuse::load_graphdef, &graphfuse::save_graphdef, &graphfuse::load_tfjs_model, &graphfuse::save_tfjs_model});
}
