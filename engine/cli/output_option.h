// `--external-data` and `--external-threshold` for the commands that write a graph: how an
// .onnx output lays out its tensor bytes (docs/big-models.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "graphfuse/graph.h"
#include "graphfuse/onnx.h"

namespace graphfuse::cli {

/// Adds the options to `cmd`, stored in `opt`.
void add_output_options(CLI::App* cmd, OnnxSaveOptions& opt);
/// save_graph, or save_onnx with `opt` for an .onnx path; `opt` set for another format is an error.
void save_output(const Graph& g, const std::string& path, const OnnxSaveOptions& opt);

}  // namespace graphfuse::cli
