// Internal to io: a graph file's bytes mapped into memory rather than copied, for the
// readers that take a whole text (JSON, .graph, .gfb).
//
// Why: reading an 86 MB file into a fresh string cost about 75 ms of CPU (zeroing the
// string, a page fault for each of its 21,000 pages, then the copy out of the page
// cache); mapping the page cache costs under 10 ms and no extra memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace graphfuse::textio {

class MappedFile {
 public:
  /// The regular file at `path`, mapped read-only with at least `padding` readable bytes
  /// past its end (zeros). Empty when it cannot be mapped (not a regular file, empty,
  /// unreadable, mmap refused): the caller then reads it with read_file, which reports
  /// whatever is wrong.
  ///
  /// The bytes are the file's own: a file truncated by another program while it is being
  /// read is an error of the system (SIGBUS), as for any program that maps its input.
  static std::optional<MappedFile> open(const std::string& path, std::size_t padding);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view text() const { return {base_, size_}; }
  /// How many bytes from text().data() may be read: size plus the padding, or more.
  std::size_t readable() const { return mapped_; }

 private:
  MappedFile(const char* base, std::size_t size, std::size_t mapped) : base_(base), size_(size), mapped_(mapped) {}
  const char* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
};

}  // namespace graphfuse::textio
