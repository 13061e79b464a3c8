// Internal to io: ONNX external data (tensor bytes kept in files beside the .onnx), read on
// import and placed on export; see docs/big-models.md.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse::onnx_io {

/// Graph property: the location (relative to the model's folder) of the first external
/// tensor the model was read with; absent for an all-inline model. Export keeps that form.
inline constexpr std::string_view kExternalData = "onnx.external_data";  ///< string

/// Where a tensor's bytes were read from. It rides as the deleter of Tensor::data's
/// shared_ptr, so every copy of the tensor (graph copies share data, never copy it) still
/// says where its bytes live, and a tensor a rewrite creates, with bytes of its own, does
/// not: export can point an unchanged tensor back into the input's file.
struct ExternalOrigin {
  std::string file;  ///< absolute, normalized path of the data file
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  void operator()(const std::string* p) const { delete p; }
};

/// The origin of `t`'s bytes when they are, unchanged, those of an external-data tensor.
const ExternalOrigin* external_origin(const Tensor& t);

/// Reads the bytes of the EXTERNAL tensor `t` (location, offset, length relative to
/// `model_dir`), tagged with their origin. Errors name `what`: a location that is absolute
/// or uses `..`, a missing file, a range outside it, bad numbers.
std::shared_ptr<const std::string> read_external_tensor(const onnx::TensorProto& t, const std::string& model_dir,
                                                        const std::string& what);

/// The first external location among `gp`'s initializers, or "".
std::string first_external_location(const onnx::GraphProto& gp);

}  // namespace graphfuse::onnx_io
