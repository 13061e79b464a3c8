// TensorFlow GraphDefs and TF.js graph models <-> graphs: the graphfuse::tf library (link it
// for .pb and TF.js model.json in load_graph/save_graph). docs/tensorflow.md.
#pragma once

#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Reads a binary GraphDef (.pb, a frozen graph). Nodes keep their names as ids; a value
/// "name:k" is port k of node "name"; Placeholder nodes become graph inputs and nodes whose
/// outputs nothing reads become graph outputs. Attributes are typed as TensorFlow types
/// them (ints, floats, strings, bools, lists, tensors); types, shapes and functions are
/// kept opaque for the way back. Throws Error naming the file for anything it cannot read.
Graph load_graphdef(const std::string& path);
/// Writes `g` as a binary GraphDef, atomically.
void save_graphdef(const Graph& g, const std::string& path);
/// The same from and to memory. `name` stands for the file in error messages.
Graph parse_graphdef(std::string_view bytes, const std::string& name = "<graphdef>");
std::string write_graphdef(const Graph& g);

/// Reads a TF.js graph model: model.json (its modelTopology is a GraphDef as JSON) and the
/// weight shards its weightsManifest names, beside it. Weights become the Const nodes'
/// tensors (float32, int32, bool; uint8/uint16/float16-quantized weights dequantized as
/// TF.js does, their quantization kept for the way back).
Graph load_tfjs_model(const std::string& path);
/// Writes model.json and its shards (group1-shard<i>of<n>.bin) into path's folder.
void save_tfjs_model(const Graph& g, const std::string& path);
/// True when `text` is the start of a TF.js model.json (a JSON object whose first key is
/// one a TF.js model has and graphfuse's own JSON has not).
bool looks_like_tfjs_model(std::string_view text);

}  // namespace graphfuse
