// The wire reader: three levels of ModelProto (model field 7 = graph, graph field 5 =
// initializer, tensor field 9 = raw_data); every other field is copied as its bytes. Lengths
// of the re-encoded graph and tensors change, so each level is rebuilt and framed anew.
#include "io/onnx_wire.h"

namespace graphfuse::onnx_io {

namespace {

constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

struct Reader {
  std::string_view in;
  std::size_t pos = 0;
  bool ok = true;

  bool done() const { return pos >= in.size() || !ok; }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= in.size()) break;
      const auto b = static_cast<unsigned char>(in[pos++]);
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    ok = false;
    return 0;
  }
  // One field: its number, wire type, and the whole field's bytes (tag included); for a
  // length-delimited field also its payload.
  struct Field {
    std::uint64_t number = 0;
    int type = 0;
    std::string_view whole, payload;
  };
  Field field() {
    Field f;
    const std::size_t start = pos;
    const std::uint64_t tag = varint();
    f.number = tag >> 3;
    f.type = static_cast<int>(tag & 7);
    if (f.number == 0) ok = false;
    switch (f.type) {
      case kVarint: varint(); break;
      case kFixed64: skip(8); break;
      case kFixed32: skip(4); break;
      case kLengthDelimited: {
        const std::uint64_t n = varint();
        if (ok && n <= in.size() - pos) f.payload = in.substr(pos, static_cast<std::size_t>(n));
        skip(n);
        break;
      }
      default: ok = false;  // groups (deprecated, unused by ONNX) and invalid types
    }
    if (ok) f.whole = in.substr(start, pos - start);
    return f;
  }
  void skip(std::uint64_t n) {
    if (n > in.size() - pos) ok = false;
    else pos += static_cast<std::size_t>(n);
  }
};

void put_varint(std::string& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>(v | 0x80));
  out.push_back(static_cast<char>(v));
}

void put_message(std::string& out, int field, const std::string& body) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | kLengthDelimited);
  put_varint(out, body.size());
  out += body;
}

struct Stripper {
  std::string_view file;
  std::uint64_t threshold;
  std::vector<LeftInFile> left;
  std::size_t initializers = 0;
  bool ok = true;

  std::uint64_t offset_of(std::string_view part) const { return static_cast<std::uint64_t>(part.data() - file.data()); }

  // A TensorProto without a big raw_data; a tensor with two raw_data fields (the last
  // wins in protobuf) is left to protobuf.
  std::string tensor(std::string_view body) {
    Reader r{body};
    std::string out;
    int raws = 0;
    while (!r.done()) {
      Reader::Field f = r.field();
      if (!r.ok) break;
      if (f.number == kTensorRawData && f.type == kLengthDelimited) {
        ++raws;
        if (f.payload.size() >= threshold) {
          left.push_back({initializers, offset_of(f.payload), f.payload.size()});
          continue;
        }
      }
      out += f.whole;
    }
    if (!r.ok || raws > 1) ok = false;
    return out;
  }

  std::string graph(std::string_view body) {
    Reader r{body};
    std::string out;
    out.reserve(body.size() < (1u << 20) ? body.size() : 1u << 20);
    while (!r.done()) {
      Reader::Field f = r.field();
      if (!r.ok) break;
      if (f.number == kGraphInitializer && f.type == kLengthDelimited) {
        put_message(out, kGraphInitializer, tensor(f.payload));
        ++initializers;
      } else {
        out += f.whole;
      }
    }
    if (!r.ok) ok = false;
    return out;
  }

  std::string model() {
    Reader r{file};
    std::string out;
    while (!r.done()) {
      Reader::Field f = r.field();
      if (!r.ok) break;
      if (f.number == kModelGraph && f.type == kLengthDelimited) put_message(out, kModelGraph, graph(f.payload));
      else out += f.whole;
    }
    if (!r.ok) ok = false;
    return out;
  }
};

}  // namespace

std::optional<StrippedModel> strip_initializer_data(std::string_view file, std::uint64_t threshold) {
  Stripper s{file, threshold == 0 ? 1 : threshold, {}};
  std::string bytes = s.model();
  if (!s.ok || s.left.empty()) return std::nullopt;
  return StrippedModel{std::move(bytes), std::move(s.left)};
}

}  // namespace graphfuse::onnx_io
