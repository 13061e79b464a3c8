// Internal to io: write_file_atomic from views, for writers of files of many gigabytes that
// write each piece from where its bytes are (the ONNX model and its external data file).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace graphfuse {

/// Writes the pieces, in order, as the file at `path`, atomically (engine/io/graph_files.cpp).
void write_file_atomic(const std::string& path, std::span<const std::string_view> pieces);

}  // namespace graphfuse
