// Internal to io: formats that live in other libraries plug into load_graph/save_graph here.
// The engine must not depend on ONNX (a program rewriting a boolean circuit should not link
// protobuf), so graph_files.cpp dispatches .onnx through these hooks, which the graphfuse::onnx
// library sets from a static initializer (engine/io/onnx_format.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse::io_hooks {

struct OnnxFormat {
  Graph (*load)(const std::string& path) = nullptr;
  void (*save)(const Graph& g, const std::string& path) = nullptr;
  /// graphfuse::raise_onnx_opset as a report line (a target's `raise_onnx_opset`).
  std::string (*raise_opset)(Graph& g, std::int64_t version) = nullptr;
};

/// Installs the ONNX reader and writer; returns true so it can initialize a static.
bool register_onnx_format(OnnxFormat format);

/// Raises an ONNX graph's opset through the registered hook (a line for the rewrite's
/// report, "" when nothing was asked or done); a graph that imports an ONNX opset while
/// graphfuse::onnx is not linked gets a line saying so.
std::string raise_onnx_opset(Graph& g, std::int64_t version);

/// TensorFlow GraphDef (.pb) and TF.js graph models (model.json), from graphfuse::tf
/// (engine/io/graphdef_file.cpp).
struct TfFormat {
  Graph (*load_graphdef)(const std::string& path) = nullptr;
  void (*save_graphdef)(const Graph& g, const std::string& path) = nullptr;
  Graph (*load_tfjs)(const std::string& path) = nullptr;
  void (*save_tfjs)(const Graph& g, const std::string& path) = nullptr;
};

/// Installs the TensorFlow readers and writers; returns true so it can initialize a static.
bool register_tf_format(TfFormat format);

}  // namespace graphfuse::io_hooks
