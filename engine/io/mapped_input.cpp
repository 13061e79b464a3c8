// MappedInput: a file mapped read-only without populating it (MAP_PRIVATE, no
// MAP_POPULATE): a 20 GB data file costs address space, not memory, until pages are read,
// and then page cache that the kernel may drop again (resident pages of a file mapping are
// clean: nothing is swapped).
#include "io/mapped_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace graphfuse::io {

// The deleter marks a TensorBytes owner as a mapping (std::get_deleter finds it).
struct MappedInput::Unmap {
  void operator()(const MappedInput* m) const { delete m; }
};

MappedInput::~MappedInput() {
  if (base_ && size_ > 0) ::munmap(const_cast<char*>(base_), size_);
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<const MappedInput> MappedInput::open(const std::string& path, bool data_file) {
  // Looked at before it is opened: opening a named pipe would wait for its writer.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode)) return nullptr;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return nullptr;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) {
    ::close(fd);
    return nullptr;
  }
  std::shared_ptr<MappedInput> m(new MappedInput, Unmap{});
  m->fd_ = fd;
  m->base_ = static_cast<const char*>(base);
  m->size_ = size;
  m->data_file_ = data_file;
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  m->path_ = ec ? std::filesystem::absolute(path).lexically_normal().string() : abs.string();
  return m;
}

TensorBytes MappedInput::view(const std::shared_ptr<const MappedInput>& self, std::uint64_t offset,
                              std::uint64_t length) {
  // An empty view still points at readable memory, as an empty string's bytes do.
  if (length == 0) return TensorBytes(self, std::string_view(""));
  return TensorBytes(self, std::string_view(self->base_ + offset, static_cast<std::size_t>(length)));
}

const MappedInput* MappedInput::of(const TensorBytes& b, std::uint64_t* offset) {
  if (!b || !std::get_deleter<Unmap>(b.owner())) return nullptr;
  const auto* m = static_cast<const MappedInput*>(b.owner().get());
  const char* p = b->data();
  if (b->empty() || p < m->base_ || p + b->size() > m->base_ + m->size_) return nullptr;
  if (offset) *offset = static_cast<std::uint64_t>(p - m->base_);
  return m;
}

TensorBytes aligned_bytes(TensorBytes b, std::size_t element_size) {
  if (!b || element_size <= 1 || reinterpret_cast<std::uintptr_t>(b->data()) % element_size == 0) return b;
  return TensorBytes::own(std::string(b.view()));
}

PieceSource file_source(const TensorBytes& b) {
  std::uint64_t offset = 0;
  const MappedInput* m = MappedInput::of(b, &offset);
  return m ? PieceSource{m->fd(), offset} : PieceSource{};
}

}  // namespace graphfuse::io
