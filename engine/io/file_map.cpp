// MappedFile: the file's pages mapped over a zero-filled reservation one page longer, so
// the padding a reader may look past the end is there whatever the file's size.
#include "file_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace graphfuse::textio {

std::optional<MappedFile> MappedFile::open(const std::string& path, std::size_t padding) {
  // Looked at before it is opened: opening a named pipe would wait for its writer, and
  // closing it again would cost the writer its reader (read_file opens it once).
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode)) return std::nullopt;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<MappedFile> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    auto size = static_cast<std::size_t>(st.st_size);
    auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t mapped = (size + padding + page - 1) / page * page;
    // Anonymous zero pages first, then the file over their start: the bytes past the
    // file's end in its last page read as zeros, and so do the pages after it. The file's
    // pages are mapped in one go (MAP_POPULATE): every reader reads the whole text, and
    // one call costs less than a fault per 64 KB as the reader gets there.
    void* base = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base != MAP_FAILED) {
      if (::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) != MAP_FAILED) {
        out.emplace(MappedFile(static_cast<const char*>(base), size, mapped));
      } else {
        ::munmap(base, mapped);
      }
    }
  }
  ::close(fd);
  return out;
}

MappedFile::MappedFile(MappedFile&& other) noexcept : base_(other.base_), size_(other.size_), mapped_(other.mapped_) {
  other.base_ = nullptr;
  other.mapped_ = 0;
}

MappedFile::~MappedFile() {
  if (base_) ::munmap(const_cast<char*>(base_), mapped_);
}

}  // namespace graphfuse::textio
