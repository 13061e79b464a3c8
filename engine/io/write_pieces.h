// Internal to io: write_file_atomic from views, for writers of files of many gigabytes that
// write each piece from where its bytes are (the ONNX model and its external data file).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace graphfuse {

/// Where a piece's bytes are in a file too (a view of a mapped input): the writer copies
/// them file to file in the kernel (copy_file_range), so they are neither read into this
/// process nor counted in its resident memory. fd < 0: only in memory.
struct PieceSource {
  int fd = -1;
  std::uint64_t offset = 0;
};

/// Writes the pieces, in order, as the file at `path`, atomically (engine/io/graph_files.cpp).
void write_file_atomic(const std::string& path, std::span<const std::string_view> pieces);
/// The same; `sources` is empty or parallel to `pieces`.
void write_file_atomic(const std::string& path, std::span<const std::string_view> pieces,
                       std::span<const PieceSource> sources);

}  // namespace graphfuse
