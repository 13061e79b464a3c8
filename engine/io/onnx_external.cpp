// ONNX external data: reading EXTERNAL tensors on import, and on export placing each
// initializer inline, in a new data file beside the output, or (--external-data same) back
// where the input had it. The model file and the data file are written as pieces straight
// from the tensors' bytes, so no buffer ever holds the whole model. docs/big-models.md.
#include "io/onnx_external.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <set>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"
#include "io/write_pieces.h"

namespace graphfuse::onnx_io {

namespace fs = std::filesystem;

const io::MappedInput* external_origin(const Tensor& t, std::uint64_t* offset) {
  const io::MappedInput* m = io::MappedInput::of(t.data, offset);
  return m && m->data_file() ? m : nullptr;
}

namespace {

std::int64_t parse_count(const std::string& key, const std::string& value, const std::string& what) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc{} || end != value.data() + value.size())
    throw Error(what + ": external data '" + key + "' is not a number: '" + value + "'");
  if (v < 0) throw Error(what + ": external data '" + key + "' is negative: " + value);
  return v;
}

// Reads exactly `length` bytes at `offset`; false on a short read (the file shrank).
bool read_at(int fd, char* out, std::uint64_t length, std::uint64_t offset) {
  while (length > 0) {
    std::size_t chunk = length > (1u << 30) ? (1u << 30) : static_cast<std::size_t>(length);
    ssize_t n = ::pread(fd, out, chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    offset += static_cast<std::uint64_t>(n);
    length -= static_cast<std::uint64_t>(n);
  }
  return true;
}

}  // namespace

TensorBytes read_external_tensor(const onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                                 TensorSources* sources) {
  std::string location;
  bool has_offset = false, has_length = false;
  std::int64_t offset = 0, length = 0;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_count(kv.key(), kv.value(), what), has_offset = true;
    else if (kv.key() == "length") length = parse_count(kv.key(), kv.value(), what), has_length = true;
    // "checksum" and keys of later ONNX versions carry nothing the bytes need.
  }
  (void)has_offset;
  if (location.empty()) throw Error(what + ": external data has no location");
  if (location.find('\0') != std::string::npos) throw Error(what + ": external data location contains a NUL byte");
  fs::path rel(location);
  // The ONNX spec keeps external files inside the model's folder: a model from elsewhere
  // must not make graphfuse read /etc/passwd or ../../secret into its output.
  bool escapes = rel.is_absolute() || rel.has_root_name() || rel.has_root_directory();
  for (const auto& part : rel) escapes = escapes || part == "..";
  if (escapes)
    throw Error(what + ": external data location '" + location +
                "' leaves the model's folder (absolute paths and '..' are refused)");
  fs::path file = model_dir.empty() ? rel : fs::path(model_dir) / rel;
  const std::string name = file.string();
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(SourceLoc{name}, what + ": cannot open external data file '" + location + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(SourceLoc{name}, what + ": external data '" + location + "' is not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto off = static_cast<std::uint64_t>(offset);
  if (off > size) {
    ::close(fd);
    throw Error(SourceLoc{name}, what + ": external data offset " + std::to_string(off) + " is past the end of '" +
                                     location + "' (" + std::to_string(size) + " bytes)");
  }
  auto len = has_length ? static_cast<std::uint64_t>(length) : size - off;
  if (len > size - off) {
    ::close(fd);
    throw Error(SourceLoc{name}, what + ": external data range [" + std::to_string(off) + ", +" + std::to_string(len) +
                                     ") is past the end of '" + location + "' (" + std::to_string(size) +
                                     " bytes; the data file is shorter than the model says)");
  }
  // The bytes stay in the file: a view of its mapping (one per file and import), read
  // only when something looks at them.
  std::shared_ptr<const io::MappedInput> mapped;
  if (sources) {
    auto it = sources->data_files.find(name);
    if (it == sources->data_files.end()) it = sources->data_files.emplace(name, io::MappedInput::open(name, true)).first;
    mapped = it->second;
  } else {
    mapped = io::MappedInput::open(name, true);
  }
  if (mapped && mapped->size() == size) {
    ::close(fd);
    return io::MappedInput::view(mapped, off, len);
  }
  // Not mappable (an empty file): read. Sizes are checked against the shape by the
  // caller; this only refuses what cannot be allocated sensibly, before allocating it.
  if (len > (std::uint64_t{1} << 42)) {
    ::close(fd);
    throw Error(SourceLoc{name}, what + ": external data length " + std::to_string(len) + " is too large");
  }
  auto bytes = std::make_shared<std::string>(static_cast<std::size_t>(len), '\0');
  bool ok = read_at(fd, bytes->data(), len, off);
  int err = errno;
  ::close(fd);
  if (!ok) throw Error(SourceLoc{name}, what + ": cannot read external data: " + std::strerror(err));
  return TensorBytes(std::move(bytes));
}

std::string first_external_location(const onnx::GraphProto& gp) {
  for (const auto& t : gp.initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      for (const auto& kv : t.external_data())
        if (kv.key() == "location") return kv.value();
  return {};
}

namespace {

void set_external(onnx::TensorProto& head, const std::string& location, std::uint64_t offset, std::uint64_t length) {
  head.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, std::string value) {
    auto* kv = head.add_external_data();
    kv->set_key(key);
    kv->set_value(std::move(value));
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

// Tensors of 1 MiB or more start on a 64 KiB boundary of the data file, as the onnx
// package lays them out: runtimes can then map them instead of reading them.
constexpr std::uint64_t kAlignFrom = std::uint64_t{1} << 20;
constexpr std::uint64_t kAlignment = 65536;
const std::string& zeros() {
  static const std::string z(kAlignment, '\0');
  return z;
}

}  // namespace

void save_model_files(const Graph& g, const std::string& path, const OnnxSaveOptions& options) {
  std::string mode = options.external_data;
  if (mode != "" && mode != "inline" && mode != "external" && mode != "same")
    throw Error("--external-data must be inline, external or same, not '" + mode + "'");
  const bool chosen = !mode.empty();
  if (!chosen) mode = g.properties().has(std::string(kExternalData)) ? "external" : "inline";

  if (mode == "inline") {
    ModelPieces inline_model = serialize_model_pieces(g, {});
    if (inline_model.size <= static_cast<std::uint64_t>(INT_MAX)) {
      write_file_atomic(path, std::span<const std::string_view>(inline_model.pieces),
                        std::span<const PieceSource>(inline_model.sources));
      return;
    }
    if (chosen)
      throw Error("the model is " + std::to_string(inline_model.size >> 20) +
                  " MiB, over protobuf's 2 GB limit for one file: write it with --external-data external");
    mode = "external";  // a model over 2 GB is always written with external data
  }

  const fs::path out(path);
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  fs::path abs_dir = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) abs_dir = fs::absolute(dir).lexically_normal();

  // The new data file must not replace a file that unchanged tensors still point into.
  std::set<std::string> origins;
  if (mode == "same")
    for (NodeId n : g.nodes())
      if (const Tensor* t = g.node(n).attrs.get_if<Tensor>("value"))
        if (const io::MappedInput* o = external_origin(*t, nullptr)) origins.insert(o->path());
  std::string data_name = out.filename().string() + ".data";
  for (int i = 1; origins.count((abs_dir / data_name).lexically_normal().string()); ++i)
    data_name = out.filename().string() + "." + std::to_string(i) + ".data";

  std::vector<std::string_view> data;
  std::vector<PieceSource> data_sources;
  std::uint64_t data_size = 0;
  auto place = [&](const Tensor& t, onnx::TensorProto& head) -> bool {
    if (mode == "same") {
      std::uint64_t at = 0;
      if (const io::MappedInput* o = external_origin(t, &at)) {
        fs::path rel = fs::path(o->path()).lexically_relative(abs_dir);
        if (rel.empty() || *rel.begin() == "..")
          throw Error("--external-data same: tensor '" + head.name() + "' lives in '" + o->path() +
                      "', outside the output's folder '" + abs_dir.string() +
                      "' (write the output beside the input, or use --external-data external)");
        set_external(head, rel.generic_string(), at, t.data->size());
        return true;
      }
    }
    const std::string_view bytes = *t.data;
    if (bytes.size() < options.external_threshold || bytes.empty()) return false;
    std::uint64_t offset = data_size;
    if (bytes.size() >= kAlignFrom && offset % kAlignment != 0) {
      std::uint64_t pad = kAlignment - offset % kAlignment;
      data.emplace_back(zeros().data(), pad);
      data_sources.emplace_back();
      offset += pad;
    }
    data.emplace_back(bytes);
    data_sources.push_back(io::file_source(t.data));
    data_size = offset + bytes.size();
    set_external(head, data_name, offset, bytes.size());
    return true;
  };
  ModelPieces model = serialize_model_pieces(g, place);
  if (model.size > static_cast<std::uint64_t>(INT_MAX))
    throw Error("the model is " + std::to_string(model.size >> 20) +
                " MiB without its external tensors, over protobuf's 2 GB limit");
  // Data first: a model file never points into a data file that is not there yet.
  if (!data.empty())
    write_file_atomic((dir / data_name).string(), std::span<const std::string_view>(data),
                      std::span<const PieceSource>(data_sources));
  write_file_atomic(path, std::span<const std::string_view>(model.pieces),
                    std::span<const PieceSource>(model.sources));
}

}  // namespace graphfuse::onnx_io

namespace graphfuse {

void save_onnx(const Graph& g, const std::string& path, const OnnxSaveOptions& options) {
  try {
    onnx_io::save_model_files(g, path, options);
  } catch (const Error& e) {
    if (!e.loc().file.empty()) throw;
    throw Error(SourceLoc{path}, e.message());
  }
}

void save_onnx(const Graph& g, const std::string& path) { save_onnx(g, path, OnnxSaveOptions{}); }

}  // namespace graphfuse
