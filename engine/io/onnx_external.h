// Internal to io: ONNX external data (tensor bytes kept in files beside the .onnx), read on
// import and placed on export; see docs/big-models.md.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "graphfuse/graph.h"
#include "io/mapped_input.h"

namespace graphfuse::onnx_io {

/// Graph property: the location (relative to the model's folder) of the first external
/// tensor the model was read with; absent for an all-inline model. Export keeps that form.
inline constexpr std::string_view kExternalData = "onnx.external_data";  ///< string

/// Where an import finds tensor bytes without copying them: the mapped model file (the
/// initializers whose raw_data the wire reader left there) and the data files it has
/// mapped, each once.
struct TensorSources {
  std::shared_ptr<const io::MappedInput> model;
  /// Initializers parsed without their raw_data: where it is in `model` (offset, length).
  std::unordered_map<const onnx::TensorProto*, std::pair<std::uint64_t, std::uint64_t>> raw;
  /// By the path opened; null for a file that could not be mapped (read instead).
  std::map<std::string, std::shared_ptr<const io::MappedInput>> data_files;
};

/// Where an unchanged external tensor's bytes are: the data file it was read from, or
/// null when `t`'s bytes are not (or no longer) a view of one.
const io::MappedInput* external_origin(const Tensor& t, std::uint64_t* offset);

/// The bytes of the EXTERNAL tensor `t` (location, offset, length relative to
/// `model_dir`): a view of the mapped data file (mapped once per file through `sources`,
/// which may be null). Errors name `what`: a location that is absolute or uses `..`, a
/// missing file, a range outside it, bad numbers.
TensorBytes read_external_tensor(const onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                                 TensorSources* sources);

/// The first external location among `gp`'s initializers, or "".
std::string first_external_location(const onnx::GraphProto& gp);

}  // namespace graphfuse::onnx_io
