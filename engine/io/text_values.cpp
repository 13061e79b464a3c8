// Attribute values and tensors as text: round-tripping numbers, tensor elements, base64,
// string escapes.
#include "text_values.h"

#include "graphfuse/float16.h"
#include "graph/value_checks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <queue>

namespace graphfuse::textio {

namespace {

/// Reads `s` the way every reader does (as a double) and narrows; true when it gives `f` back.
bool reads_back(const char* s, const char* end, float f) {
  double d = 0;
  auto r = std::from_chars(s, end, d);
  if (r.ec != std::errc() || r.ptr != end) return false;
  auto g = static_cast<float>(d);
  return std::memcmp(&g, &f, sizeof f) == 0;
}

/// Appends ".0" in [buf, end) when the number has no '.' or exponent; returns the new end
/// (buf has room for 2 more).
char* floatify(char* buf, char* end) {
  for (char* p = buf; p != end; ++p)
    if (*p == '.' || *p == 'e' || *p == 'E') return end;
  *end++ = '.';
  *end++ = '0';
  return end;
}

}  // namespace


namespace {

template <class T>
void append_ints(std::string& out, const Tensor& t) {
  const char* p = t.data->data();
  for (std::int64_t i = 0, n = t.num_elements(); i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    if (i) out += ", ";
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  }
}

template <class T, class Append>
void append_floats(std::string& out, const Tensor& t, const FloatWords& w, Append append) {
  const char* p = t.data->data();
  for (std::int64_t i = 0, n = t.num_elements(); i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    if (i) out += ", ";
    append(out, v, w);
  }
}

/// Stores one element as T, checking integer range; "" or an error message.
template <class T>
std::string put_int(const Element& e, std::string& bytes) {
  std::int64_t v = e.i;
  if (!e.is_int) {
    if (!std::isfinite(e.d) || std::trunc(e.d) != e.d || std::fabs(e.d) > 9.2e18)
      return "integer tensor element is not an integer";
    v = static_cast<std::int64_t>(e.d);
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (v != 0 && v != 1) return "bool tensor element must be 0 or 1";
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    if (v < 0) return "value " + std::to_string(v) + " out of range for uint64";
  } else if constexpr (!std::is_same_v<T, std::int64_t>) {
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
      return "value " + std::to_string(v) + " out of range for the tensor's element type";
  }
  auto x = static_cast<T>(v);
  bytes.append(reinterpret_cast<const char*>(&x), sizeof x);
  return {};
}

}  // namespace

std::vector<NodeId> write_order(const Graph& g) {
  // When every input comes from a lower id (a graph built producers-first and rewritten
  // in place), taking the lowest ready id each time is plain id order: one cheap pass
  // instead of a heap over the whole graph.
  std::vector<NodeId> ids = g.nodes();
  auto upstream = [&](NodeId n) {
    const auto& ins = g.node(n).inputs;
    return std::all_of(ins.begin(), ins.end(), [n](ValueRef v) { return !v.valid() || v.node < n; });
  };
  if (std::all_of(ids.begin(), ids.end(), upstream)) return ids;
  std::vector<std::uint32_t> pending(g.capacity(), 0);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId n : g.nodes()) {
    for (ValueRef v : g.node(n).inputs) pending[n] += v.valid();
    if (pending[n] == 0) ready.push(n);
  }
  std::vector<NodeId> order;
  order.reserve(g.size());
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (std::uint32_t k = 0; k < g.node(n).outputs.size(); ++k)
      for (const Use& u : g.consumers({n, k}))
        if (--pending[u.node] == 0) ready.push(u.node);
  }
  if (order.size() != g.size()) return g.topological_order();  // throws naming a node on the cycle
  return order;
}

void append_float(std::string& out, float f, const FloatWords& words) {
  if (std::isnan(f)) return out.append(words.nan), void();
  if (std::isinf(f)) return out.append(f < 0 ? words.neg_inf : words.inf), void();
  char buf[64];
  char* end = floatify(buf, std::to_chars(buf, buf + sizeof buf - 2, f).ptr);
  // Double rounding (decimal -> double -> float) can miss by one ulp in rare cases; the
  // double's own shortest form always narrows back exactly.
  if (!reads_back(buf, end, f)) end = floatify(buf, std::to_chars(buf, buf + sizeof buf - 2, static_cast<double>(f)).ptr);
  out.append(buf, end);
}

void append_double(std::string& out, double d, const FloatWords& words) {
  if (std::isnan(d)) return out.append(words.nan), void();
  if (std::isinf(d)) return out.append(d < 0 ? words.neg_inf : words.inf), void();
  char buf[64];
  out.append(buf, floatify(buf, std::to_chars(buf, buf + sizeof buf - 2, d).ptr));
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

std::string format_float(float f, const FloatWords& words) {
  std::string s;
  append_float(s, f, words);
  return s;
}

std::string format_double(double d, const FloatWords& words) {
  std::string s;
  append_double(s, d, words);
  return s;
}

void append_tensor_elements(std::string& out, const Tensor& t, const FloatWords& w,
                            const std::string& what) {
  if (!t.has_data()) return;
  std::size_t size = dtype_size(t.dtype);
  if (size == 0 || dtype_name(t.dtype) == "undefined")
    throw Error(what + ": cannot write a tensor of element type " + std::string(dtype_name(t.dtype)) +
                " (" + std::to_string(static_cast<int>(t.dtype)) + ") as text");
  if (t.num_elements() < 0 || t.data->size() != static_cast<std::size_t>(t.num_elements()) * size)
    throw Error(what + ": tensor data size does not match its shape");
  switch (t.dtype) {
    case DType::Float32: return append_floats<float>(out, t, w, append_float);
    case DType::Float64: return append_floats<double>(out, t, w, append_double);
    case DType::Float16:
      return append_floats<std::uint16_t>(out, t, w, [](std::string& o, std::uint16_t v, const FloatWords& w) {
        append_float(o, half_to_float(v), w);
      });
    case DType::BFloat16:
      return append_floats<std::uint16_t>(out, t, w, [](std::string& o, std::uint16_t v, const FloatWords& w) {
        append_float(o, bf16_to_float(v), w);
      });
    case DType::Int8: return append_ints<std::int8_t>(out, t);
    case DType::Int16: return append_ints<std::int16_t>(out, t);
    case DType::Int32: return append_ints<std::int32_t>(out, t);
    case DType::Int64: return append_ints<std::int64_t>(out, t);
    case DType::UInt8: return append_ints<std::uint8_t>(out, t);
    case DType::UInt16: return append_ints<std::uint16_t>(out, t);
    case DType::UInt32: return append_ints<std::uint32_t>(out, t);
    case DType::UInt64: {
      // The text readers take integers as int64 (a tensor element is checked against its
      // type after that), so a larger uint64 would be written and then refused on reading.
      // Refuse it here instead: such tensors stay in .onnx or .gfb (docs/limits.md).
      for (std::int64_t i = 0, n = t.num_elements(); i < n; ++i) {
        std::uint64_t v;
        std::memcpy(&v, t.data->data() + i * 8, 8);
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw Error(what + ": uint64 element " + std::to_string(i) + " is " + std::to_string(v) +
                      ", above 2^63-1, which .graph, YAML and JSON cannot hold; save as .onnx or .gfb");
      }
      return append_ints<std::uint64_t>(out, t);
    }
    case DType::Bool: {
      // A bool byte other than 0/1 (from ONNX or .gfb) is true; the readers take only 0 and 1.
      const char* p = t.data->data();
      for (std::int64_t i = 0, n = t.num_elements(); i < n; ++i) {
        if (i) out += ", ";
        out += p[i] ? '1' : '0';
      }
      return;
    }
    default: throw Error(what + ": cannot write this tensor element type as text");
  }
}

std::string make_tensor(DType dtype, std::vector<std::int64_t> shape, bool has_data,
                        const std::vector<Element>& data, Tensor& out) {
  if (std::string err = checks::dtype_problem(dtype); !err.empty()) return err;
  if (std::string err = checks::tensor_shape_problem(shape); !err.empty()) return err;
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  out = Tensor{};
  out.dtype = dtype;
  out.shape = std::move(shape);
  if (!has_data) return {};
  std::size_t size = dtype_size(dtype);
  if (size == 0) return "a tensor of element type " + std::string(dtype_name(dtype)) + " cannot hold data";
  if (static_cast<std::int64_t>(data.size()) != count)
    return "tensor has " + std::to_string(data.size()) + " values but its shape needs " + std::to_string(count);
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(count) * size);
  for (const Element& e : data) {
    double d = e.is_int ? static_cast<double>(e.i) : e.d;
    std::string err;
    switch (dtype) {
      case DType::Float32: {
        float f;
        if (!to_float32(d, f)) return "value out of float32 range";
        bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
        break;
      }
      case DType::Float64: bytes.append(reinterpret_cast<const char*>(&d), sizeof d); break;
      case DType::Float16: {
        std::uint16_t h = float_to_half(static_cast<float>(d));
        bytes.append(reinterpret_cast<const char*>(&h), sizeof h);
        break;
      }
      case DType::BFloat16: {
        std::uint16_t h = float_to_bf16(static_cast<float>(d));
        bytes.append(reinterpret_cast<const char*>(&h), sizeof h);
        break;
      }
      case DType::Int8: err = put_int<std::int8_t>(e, bytes); break;
      case DType::Int16: err = put_int<std::int16_t>(e, bytes); break;
      case DType::Int32: err = put_int<std::int32_t>(e, bytes); break;
      case DType::Int64: err = put_int<std::int64_t>(e, bytes); break;
      case DType::UInt8: err = put_int<std::uint8_t>(e, bytes); break;
      case DType::UInt16: err = put_int<std::uint16_t>(e, bytes); break;
      case DType::UInt32: err = put_int<std::uint32_t>(e, bytes); break;
      case DType::UInt64: err = put_int<std::uint64_t>(e, bytes); break;
      case DType::Bool: err = put_int<bool>(e, bytes); break;
      default: return "a tensor of this element type cannot hold data";
    }
    if (!err.empty()) return err;
  }
  out.data = std::make_shared<const std::string>(std::move(bytes));
  return {};
}

namespace {
const char* element_word(std::size_t kind) {
  static constexpr const char* kWords[] = {"an int", "a float", "a string", "a bool", "a tensor"};
  return kWords[kind];
}
template <class T>
std::vector<T> take_all(std::vector<ListElement>& elems) {
  std::vector<T> v;
  v.reserve(elems.size());
  for (ListElement& e : elems) v.push_back(std::move(std::get<T>(e)));
  return v;
}
}  // namespace

std::string make_list(std::vector<ListElement> elems, AttrValue& out, std::size_t& bad) {
  constexpr std::size_t kInt = 0, kFloat = 1, kString = 2, kBool = 3;  // ListElement's order
  std::size_t kind = elems.empty() ? kInt : elems[0].index();
  for (std::size_t i = 1; i < elems.size(); ++i) {
    std::size_t k = elems[i].index();
    if (k != kind && !(k <= kFloat && kind <= kFloat)) {
      bad = i;
      return "list element " + std::to_string(i) + " is " + element_word(k) +
             ", unlike the elements before it (a list holds numbers, strings, bools or tensors)";
    }
    if (k == kFloat) kind = kFloat;
  }
  switch (kind) {
    case kInt: out = take_all<std::int64_t>(elems); break;
    case kFloat: {
      std::vector<float> v(elems.size());
      for (std::size_t i = 0; i < elems.size(); ++i) {
        const auto* n = std::get_if<std::int64_t>(&elems[i]);
        if (!to_float32(n ? static_cast<double>(*n) : std::get<double>(elems[i]), v[i])) {
          bad = i;
          return "float out of float32 range";
        }
      }
      out = std::move(v);
      break;
    }
    case kString: out = take_all<std::string>(elems); break;
    case kBool: out = take_all<bool>(elems); break;
    default: out = take_all<Tensor>(elems); break;
  }
  return "";
}

bool to_float32(double d, float& out) {
  out = static_cast<float>(d);
  return !(std::isinf(out) && std::isfinite(d));
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                      (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kB64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool base64_decode(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  auto value = [](char c) -> int {
    const char* p = std::strchr(kB64, c);
    return c != '\0' && p ? static_cast<int>(p - kB64) : -1;
  };
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return false;
      }
    }
    std::uint32_t x = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(x >> 16);
    if (pad < 2) out += static_cast<char>((x >> 8) & 255);
    if (pad < 1) out += static_cast<char>(x & 255);
  }
  return true;
}

void append_escaped(std::string& out, std::string_view s, bool json, char quote) {
  static constexpr char hex[] = "0123456789abcdef";
  auto plain = [quote](unsigned char u) { return u >= 0x20 && u != 0x7f && u != static_cast<unsigned char>(quote) && u != '\\'; };
  for (std::size_t i = 0; i < s.size();) {
    std::size_t run = i;  // copy runs of plain bytes whole
    while (run < s.size() && plain(static_cast<unsigned char>(s[run]))) ++run;
    out.append(s.data() + i, run - i);
    if (run == s.size()) return;
    char c = s[run];
    auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += json ? "\\u00" : "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
    i = run + 1;
  }
}

void append_quoted(std::string& out, std::string_view s, bool json, char quote) {
  out += quote;
  append_escaped(out, s, json, quote);
  out += quote;
}

std::string quote_string(std::string_view s, bool json, char quote) {
  std::string out;
  out.reserve(s.size() + 2);
  append_quoted(out, s, json, quote);
  return out;
}

}  // namespace graphfuse::textio
