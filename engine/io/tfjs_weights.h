// Internal to graphfuse::tf: TF.js weight manifests and shards <-> tensors.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "graphfuse/attribute.h"

namespace graphfuse::tf_io {

using Json = nlohmann::ordered_json;

/// One weight as graphfuse holds it: the dequantized element bytes and, when the manifest
/// quantized it, the manifest's quantization object (JSON text) for the way back.
struct TfjsWeight {
  std::string name;
  Tensor tensor;
  std::string quantization;  ///< "" when stored unquantized
};

/// Reads every group's shards (paths relative to `dir`) and decodes the weights the
/// manifest lists, in manifest order. Throws Error naming `file` on a damaged manifest,
/// a missing or short shard, or an element type TF.js weights do not hold.
std::vector<TfjsWeight> read_tfjs_weights(const Json& manifest, const std::string& dir, const std::string& file);

/// Encodes the weights (quantized again where `quantization` says) into one group of
/// shards of at most `shard_bytes` each, written into `dir`: named `names` when there are
/// as many, else group1-shard<i>of<n> with the first name's extension (".bin" without
/// names). Returns the manifest.
Json write_tfjs_weights(const std::vector<TfjsWeight>& weights, const std::string& dir, std::int64_t shard_bytes,
                        const std::vector<std::string>& names);

}  // namespace graphfuse::tf_io
