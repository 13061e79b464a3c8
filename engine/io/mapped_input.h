// Internal to io: input files mapped read-only for tensors to view (weights by reference,
// docs/big-models.md). A loaded model's weights stay where they are, in the page cache:
// nothing reads them until a rule or a kernel looks, and a writer copies them from the
// file in the kernel (copy_file_range) or points at them (--external-data same).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "graphfuse/attribute.h"
#include "io/write_pieces.h"

namespace graphfuse::io {

class MappedInput {
 public:
  /// The regular file at `path`, mapped read-only; its bytes are read when first looked
  /// at. `data_file`: an ONNX external-data file (--external-data same may point into it).
  /// Null when the file cannot be mapped (not a regular file, empty, unreadable): the
  /// caller reads it another way, which reports what is wrong.
  static std::shared_ptr<const MappedInput> open(const std::string& path, bool data_file);

  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;
  ~MappedInput();

  /// Absolute, normalized path.
  const std::string& path() const { return path_; }
  std::string_view bytes() const { return {base_, size_}; }
  std::uint64_t size() const { return size_; }
  /// Open for the mapping's lifetime: writers copy ranges from it.
  int fd() const { return fd_; }
  bool data_file() const { return data_file_; }

  /// `length` bytes at `offset` (inside the file: the caller checked), kept alive by `self`.
  static TensorBytes view(const std::shared_ptr<const MappedInput>& self, std::uint64_t offset, std::uint64_t length);
  /// The mapping `b` is a view of, with `*offset` set to where its bytes start in the
  /// file; null when `b` is not a view of a mapped file.
  static const MappedInput* of(const TensorBytes& b, std::uint64_t* offset);

 private:
  MappedInput() = default;
  struct Unmap;
  std::string path_;
  int fd_ = -1;
  const char* base_ = nullptr;
  std::size_t size_ = 0;
  bool data_file_ = false;
};

/// `b` itself when its first byte is aligned for elements of `element_size` bytes, else a
/// copy (in a new string, which is). Kernels read tensors as arrays of their element type,
/// and a view into a file is aligned only where the file's layout put it.
TensorBytes aligned_bytes(TensorBytes b, std::size_t element_size);

/// Where `b`'s bytes are in a mapped file, for write_file_atomic; fd -1 when they are not.
PieceSource file_source(const TensorBytes& b);

}  // namespace graphfuse::io
