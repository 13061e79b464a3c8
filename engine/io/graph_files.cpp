// Graph files: format by extension, load/save dispatch, whole-file reads and atomic writes.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "graphfuse/io.h"
#include "io/file_map.h"
#include "io/format_hooks.h"
#include "io/write_pieces.h"
#include "io/graph_json.h"
#include "graphfuse/tensorflow.h"

namespace graphfuse {

namespace {

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

[[noreturn]] void fail_errno(const std::string& path, const std::string& what, int err) {
  throw Error(SourceLoc{path}, what + ": " + std::strerror(err));
}

// Set by graphfuse::onnx's static initializer; constant-initialized, so it is null (not
// garbage) for any initializer that runs before it.
io_hooks::OnnxFormat onnx_format;

const io_hooks::OnnxFormat& onnx_or_fail(const std::string& path) {
  if (!onnx_format.load)
    throw Error(SourceLoc{path}, "ONNX files need the graphfuse::onnx library, which this program does not link");
  return onnx_format;
}

// Set by graphfuse::tf's static initializer, as onnx_format is.
io_hooks::TfFormat tf_format;

const io_hooks::TfFormat& tf_or_fail(const std::string& path, const char* what) {
  if (!tf_format.load_graphdef)
    throw Error(SourceLoc{path}, std::string(what) + " need the graphfuse::tf library, which this program does not link");
  return tf_format;
}

// A .pb is a GraphDef unless it starts as an ONNX ModelProto does: field 1 (ir_version, a
// varint) comes first in every ONNX writer's output, while a GraphDef starts with a node
// (field 1, length-delimited) or its versions (field 4).
bool onnx_bytes_first(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  return in.get(c) && c == 0x08;
}

// graphfuse JSON written back as a TF.js model when it was read from one.
bool is_tfjs_graph(const Graph& g) { return g.properties().has("tfjs.model"); }

}  // namespace

bool io_hooks::register_onnx_format(OnnxFormat format) {
  onnx_format = format;
  return true;
}

std::string io_hooks::raise_onnx_opset(Graph& g, std::int64_t version) {
  if (version <= 0 || !g.properties().has("onnx.opset_versions")) return {};
  if (!onnx_format.raise_opset) return "ONNX opset kept: raising it needs the graphfuse::onnx library, which this program does not link";
  return onnx_format.raise_opset(g, version);
}

bool io_hooks::register_tf_format(TfFormat format) {
  tf_format = format;
  return true;
}

bool looks_like_tfjs_model(std::string_view text) {
  std::size_t i = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  };
  skip();
  if (i >= text.size() || text[i++] != '{') return false;
  skip();
  if (i >= text.size() || text[i++] != '"') return false;
  std::size_t end = text.find('"', i);
  if (end == std::string_view::npos) return false;
  std::string_view key = text.substr(i, end - i);
  for (std::string_view k : {"format", "generatedBy", "convertedBy", "modelTopology", "weightsManifest", "signature",
                             "userDefinedMetadata", "modelInitializer", "trainingConfig"})
    if (key == k) return true;
  return false;
}

GraphFormat format_for_path(const std::string& path) {
  std::string ext = lower_extension(path);
  if (ext == ".graph") return GraphFormat::Text;
  if (ext == ".yaml" || ext == ".yml") return GraphFormat::Yaml;
  if (ext == ".json") return GraphFormat::Json;
  if (ext == ".onnx") return GraphFormat::Onnx;
  if (ext == ".dot" || ext == ".gv") return GraphFormat::Dot;
  if (ext == ".gfb") return GraphFormat::Binary;
  if (ext == ".pb") return GraphFormat::GraphDef;
  throw Error(SourceLoc{path}, "unknown graph format '" + ext +
                                   "' (expected .graph, .yaml, .yml, .json, .onnx, .pb, .dot or .gfb)");
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(SourceLoc{path}, "cannot read: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_errno(path, "cannot open", errno);
  // Straight into one string of the file's size: a stringstream would hold the bytes
  // twice more, which for a multi-gigabyte graph file is the peak of the whole load.
  std::string out;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) {
    // The JSON reader parses in place when it may read this far past the end (else it copies).
    out.reserve(size + textio::kJsonPadding);
    out.resize(size);
    in.read(out.data(), static_cast<std::streamsize>(size));
    out.resize(static_cast<std::size_t>(in.gcount()));
    if (in.bad()) fail_errno(path, "cannot read", errno);
    if (in.peek() == std::char_traits<char>::eof()) return out;
    in.clear();  // the file grew while we read: take the rest too
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail_errno(path, "cannot read", errno);
  return out + ss.str();
}

namespace {

/// The pieces, in order, as the file at `path`, replaced in one step.
// Copies `length` bytes from `src` at `offset` to the end of `fd`; false when the kernel
// cannot copy between these files (another file system, an old kernel): nothing was copied
// then, and the caller writes the bytes from memory.
bool copy_range(int src, std::uint64_t offset, int fd, std::uint64_t length, const std::string& path,
                const std::string& tmp) {
  auto in = static_cast<off64_t>(offset);
  bool first = true;
  while (length > 0) {
    const std::size_t chunk = length > (std::uint64_t{1} << 30) ? std::size_t{1} << 30 : static_cast<std::size_t>(length);
    ssize_t n = ::copy_file_range(src, &in, fd, nullptr, chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && first && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP || errno == EBADF))
      return false;
    if (n <= 0) {
      int err = n == 0 ? EIO : errno;  // 0: the source ended early (shrank since it was mapped)
      ::close(fd);
      ::unlink(tmp.c_str());
      fail_errno(path, "cannot write", err);
    }
    first = false;
    length -= static_cast<std::uint64_t>(n);
  }
  return true;
}

void write_pieces_atomic(const std::string& path, std::span<const std::string_view> pieces,
                         std::span<const PieceSource> sources = {}) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // The temporary file lives beside the target so rename() replaces it in one step
  // (a rename across file systems would not be atomic). O_EXCL with a per-process
  // counter keeps concurrent writers from sharing a temporary.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                  std::to_string(counter++)))
              .string();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt > 100)) fail_errno(path, "cannot write", errno);
  }
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const std::string_view piece = pieces[k];
    if (k < sources.size() && sources[k].fd >= 0 && !piece.empty() &&
        copy_range(sources[k].fd, sources[k].offset, fd, piece.size(), path, tmp))
      continue;
    const char* p = piece.data();
    std::size_t left = piece.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail_errno(path, "cannot write", err);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail_errno(path, "cannot write", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail_errno(path, "cannot replace", err);
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  write_pieces_atomic(path, std::span<const std::string_view>(&content, 1));
}

void write_file_atomic(const std::string& path, std::span<const std::string> pieces) {
  std::vector<std::string_view> views(pieces.begin(), pieces.end());
  write_pieces_atomic(path, views);
}

void write_file_atomic(const std::string& path, std::span<const std::string_view> pieces) {
  write_pieces_atomic(path, pieces);
}

void write_file_atomic(const std::string& path, std::span<const std::string_view> pieces,
                       std::span<const PieceSource> sources) {
  write_pieces_atomic(path, pieces, sources);
}

namespace {

/// Runs read(text, readable) on the file's bytes: mapped when the file can be (no copy;
/// kJsonPadding readable past the end), else read whole (read_file, which also reports
/// why a file cannot be read).
template <class Read>
Graph with_file_text(const std::string& path, const Read& read) {
  if (auto mapped = textio::MappedFile::open(path, textio::kJsonPadding))
    return read(mapped->text(), mapped->readable());
  std::string text = read_file(path);
  return read(std::string_view(text), text.capacity());
}

}  // namespace

Graph load_graph(const std::string& path) {
  Graph g;
  switch (format_for_path(path)) {
    case GraphFormat::Text:
      g = with_file_text(path, [&](std::string_view text, std::size_t) { return parse_graph_text(text, path); });
      break;
    case GraphFormat::Yaml: g = parse_graph_yaml(read_file(path), path); break;
    case GraphFormat::Json: {
      std::string head(256, '\0');
      std::ifstream in(path, std::ios::binary);
      head.resize(in ? static_cast<std::size_t>(in.read(head.data(), 256).gcount()) : 0);
      if (looks_like_tfjs_model(head)) {
        g = tf_or_fail(path, "TF.js graph models").load_tfjs(path);
        break;
      }
      g = with_file_text(path, [&](std::string_view text, std::size_t readable) {
        return textio::parse_graph_json(text, path, readable);
      });
      break;
    }
    case GraphFormat::Onnx: g = onnx_or_fail(path).load(path); break;
    case GraphFormat::GraphDef:
      g = onnx_bytes_first(path) ? onnx_or_fail(path).load(path) : tf_or_fail(path, "GraphDef files").load_graphdef(path);
      break;
    case GraphFormat::Dot: throw Error(SourceLoc{path}, "DOT files can be written but not read");
    case GraphFormat::Binary:
      g = with_file_text(path, [&](std::string_view bytes, std::size_t) { return parse_graph_binary(bytes, path); });
      break;
  }
  g.source_file = path;
  return g;
}

void save_graph(const Graph& g, const std::string& path) {
  switch (format_for_path(path)) {
    case GraphFormat::Text: return write_file_atomic(path, write_graph_text(g));
    case GraphFormat::Yaml: return write_file_atomic(path, write_graph_yaml(g));
    case GraphFormat::Json:
      if (is_tfjs_graph(g)) return tf_or_fail(path, "TF.js graph models").save_tfjs(g, path);
      return write_file_atomic(path, textio::write_graph_json_pieces(g));
    case GraphFormat::Dot: return write_file_atomic(path, write_graph_dot(g));
    case GraphFormat::Binary: return write_file_atomic(path, write_graph_binary(g));
    case GraphFormat::Onnx: return onnx_or_fail(path).save(g, path);  // writes beside the target and renames too
    case GraphFormat::GraphDef:
      if (g.properties().has("onnx.ir_version")) return onnx_or_fail(path).save(g, path);
      return tf_or_fail(path, "GraphDef files").save_graphdef(g, path);
  }
}

}  // namespace graphfuse
