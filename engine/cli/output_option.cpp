#include "cli/output_option.h"

#include "graphfuse/io.h"

namespace graphfuse::cli {

void add_output_options(CLI::App* cmd, OnnxSaveOptions& opt) {
  cmd->add_option("--external-data", opt.external_data,
                  "ONNX output: where tensor bytes go. inline (in the .onnx), external (tensors of "
                  "--external-threshold bytes or more in <output>.data), same (unchanged tensors point into "
                  "the input's data file, new ones go to <output>.data). Default: the input's form; external "
                  "over 2 GB")
      ->check(CLI::IsMember({"inline", "external", "same"}));
  cmd->add_option("--external-threshold", opt.external_threshold,
                  "ONNX output: smallest tensor (bytes) written as external data")
      ->default_val(1024);
}

void save_output(const Graph& g, const std::string& path, const OnnxSaveOptions& opt) {
  if (format_for_path(path) == GraphFormat::Onnx) return save_onnx(g, path, opt);
  if (!opt.external_data.empty())
    throw Error(SourceLoc{path}, "--external-data applies to .onnx outputs only");
  save_graph(g, path);
}

}  // namespace graphfuse::cli
