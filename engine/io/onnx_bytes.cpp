// ONNX models from and to memory (graphfuse/onnx.h), for programs and the Python module
// that hold a model's bytes rather than a file.
#include <climits>

#include <google/protobuf/io/coded_stream.h>

#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"

namespace graphfuse {

Graph parse_onnx(std::string_view bytes, const std::string& name, const std::string& model_dir) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(SourceLoc{name}, "not a valid ONNX model: over protobuf's 2 GB limit");
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               static_cast<int>(bytes.size()));
  coded.SetTotalBytesLimit(INT_MAX);
  onnx::ModelProto model;
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(SourceLoc{name}, "not a valid ONNX model: protobuf parsing failed (truncated or not ONNX)");
  Graph g = onnx_io::graph_from_model(model, name, model_dir);
  g.source_file = name;
  return g;
}

std::string write_onnx(const Graph& g) { return onnx_io::serialize_model(g); }

}  // namespace graphfuse
