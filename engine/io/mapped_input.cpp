// MappedInput: a file mapped read-only without populating it (MAP_PRIVATE, no
// MAP_POPULATE): a 20 GB data file costs address space, not memory, until pages are read,
// and then page cache that the kernel may drop again (resident pages of a file mapping are
// clean: nothing is swapped).
#include "io/mapped_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

namespace {

// An aligned copy of a view that remembers where in the file its bytes are, so a writer
// still copies them file to file (file_source) rather than from this process's memory.
// Only file_source knows it: MappedInput::of (--external-data same) treats it as new bytes,
// as it treated the plain copy this replaced.
struct AlignedCopy {
  std::shared_ptr<const MappedInput> from;
  std::uint64_t offset = 0;
  char* bytes = nullptr;  // new char[] or an anonymous mapping: aligned for every element type
  std::size_t size = 0;
  bool mapped = false;
  // 64 KiB or more: pages mapped populated (MAP_POPULATE), one call that fills them in
  // instead of a page fault per 4 KiB as the copy first writes each (on this VM the faults
  // were most of the load time of mobilenet_v2: 5,300 of them).
  explicit AlignedCopy(std::size_t n) : size(n) {
    if (n >= (64u << 10)) {
      void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
      if (p != MAP_FAILED) {
        bytes = static_cast<char*>(p);
        mapped = true;
        return;
      }
    }
    bytes = new char[n];
  }
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;
  ~AlignedCopy() {
    if (mapped) ::munmap(bytes, size);
    else delete[] bytes;
  }
};
struct DeleteCopy {
  void operator()(const AlignedCopy* c) const { delete c; }
};

// pread from the file's page cache into `to`: unlike a copy out of the mapping, it maps
// no page of the input (no page faults on it). False on a short read or an error.
bool read_at(int fd, char* to, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, to, n, static_cast<off_t>(offset));
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      return false;
    }
    to += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return true;
}

}  // namespace

TensorBytes aligned_bytes(TensorBytes b, std::size_t element_size) {
  if (!b || element_size <= 1 || reinterpret_cast<std::uintptr_t>(b->data()) % element_size == 0) return b;
  std::uint64_t offset = 0;
  const MappedInput* m = MappedInput::of(b, &offset);
  if (!m) return TensorBytes::own(std::string(b.view()));
  auto copy = std::shared_ptr<AlignedCopy>(new AlignedCopy(b->size()), DeleteCopy{});
  copy->from = std::static_pointer_cast<const MappedInput>(b.owner());
  copy->offset = offset;
  if (!read_at(m->fd(), copy->bytes, copy->size, offset))
    std::memcpy(copy->bytes, b->data(), copy->size);  // the mapping says why (SIGBUS), as before
  const std::string_view view(copy->bytes, copy->size);
  return TensorBytes(std::shared_ptr<const void>(std::move(copy)), view);
}

PieceSource file_source(const TensorBytes& b) {
  std::uint64_t offset = 0;
  if (const MappedInput* m = MappedInput::of(b, &offset)) return PieceSource{m->fd(), offset};
  if (!b) return PieceSource{};
  if (const auto* del = std::get_deleter<DeleteCopy>(b.owner()); del != nullptr) {
    const auto* c = static_cast<const AlignedCopy*>(b.owner().get());
    const char* p = b->data();
    if (!b->empty() && p >= c->bytes && p + b->size() <= c->bytes + c->size)
      return PieceSource{c->from->fd(), c->offset + static_cast<std::uint64_t>(p - c->bytes)};
  }
  return PieceSource{};
}

}  // namespace graphfuse::io
