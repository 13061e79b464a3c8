// Internal to io: a reader of ModelProto's wire format that finds the graph's initializer
// payloads (raw_data) without copying them, so a model parses in the time its graph takes
// and its weights stay in the mapped file (weights by reference, docs/big-models.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphfuse::onnx_io {

struct LeftInFile {
  std::size_t initializer = 0;  ///< index in the (merged) graph.initializer list
  std::uint64_t offset = 0;     ///< of the raw_data bytes in the file
  std::uint64_t length = 0;
};

/// `file` re-encoded without the raw_data of the main graph's initializers of `threshold`
/// bytes or more, and where those bytes are in `file`. Everything else (nodes, small
/// tensors, subgraphs, unknown fields) is copied as it is, so protobuf parses the result
/// to the same model less those bytes. nullopt when nothing is left out, or when `file`
/// is not well-formed wire format at the levels read (the caller then lets protobuf parse
/// it whole, and report what is wrong).
struct StrippedModel {
  std::string bytes;
  std::vector<LeftInFile> left;
};
std::optional<StrippedModel> strip_initializer_data(std::string_view file, std::uint64_t threshold);

}  // namespace graphfuse::onnx_io
