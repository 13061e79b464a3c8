// ONNX models <-> graphs: the graphfuse::onnx library (link it for .onnx in load_graph/save_graph).
#pragma once

#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Reads an .onnx file. Initializers become Const nodes (attribute "value", data shared
/// not copied); domain-qualified ops are "domain.Op"; model-level data (opsets, metadata,
/// fields graphfuse does not interpret) rides in Graph::properties() for the way back.
/// Throws Error naming the file (and node) for anything it cannot represent.
Graph load_onnx(const std::string& path);
/// Writes `g` as an .onnx file, atomically (temporary file beside it, then rename).
void save_onnx(const Graph& g, const std::string& path);

/// The same from and to memory: a serialized ModelProto. `name` stands for the model in
/// error messages; external tensor data is resolved relative to `model_dir`.
Graph parse_onnx(std::string_view bytes, const std::string& name = "<onnx>",
                 const std::string& model_dir = ".");
/// The model's bytes: exactly what save_onnx writes.
std::string write_onnx(const Graph& g);

}  // namespace graphfuse
