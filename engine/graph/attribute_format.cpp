// Printing attribute values in the .graph text syntax (shared by writers and diffs).
#include <charconv>
#include <cmath>

#include "graphfuse/attribute.h"

namespace graphfuse {

std::string format_float(float f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

namespace {

template <class T, class F>
std::string join(const std::vector<T>& xs, F&& fmt) {
  std::string s = "[";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i) s += ", ";
    s += fmt(xs[i]);
  }
  return s + "]";
}

std::string format_tensor(const Tensor& t) {
  std::string s = "tensor(" + std::string(dtype_name(t.dtype)) + ", " +
                  join(t.shape, [](std::int64_t d) { return std::to_string(d); });
  if (t.has_data()) {
    std::int64_t n = t.num_elements();
    std::string data = "[";
    for (std::int64_t i = 0; i < n; ++i) {
      if (i) data += ", ";
      switch (t.dtype) {
        case DType::Float32: data += format_float(t.as<float>()[i]); break;
        case DType::Float64: data += format_float(static_cast<float>(t.as<double>()[i])); break;
        case DType::Int64: data += std::to_string(t.as<std::int64_t>()[i]); break;
        case DType::Int32: data += std::to_string(t.as<std::int32_t>()[i]); break;
        case DType::Int8: data += std::to_string(t.as<std::int8_t>()[i]); break;
        case DType::UInt8: data += std::to_string(t.as<std::uint8_t>()[i]); break;
        case DType::Bool: data += t.as<std::uint8_t>()[i] ? "1" : "0"; break;
        default: return s + ", <" + std::to_string(t.data->size()) + " bytes>)";
      }
    }
    s += ", " + data + "]";
  }
  return s + ")";
}

}  // namespace

std::string format_attr_value(const AttrValue& v) {
  struct Visitor {
    std::string operator()(std::int64_t x) const { return std::to_string(x); }
    std::string operator()(float x) const { return format_float(x); }
    std::string operator()(const std::string& x) const { return quote_string(x); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const Tensor& t) const { return format_tensor(t); }
    std::string operator()(const std::vector<std::int64_t>& xs) const {
      return join(xs, [](std::int64_t x) { return std::to_string(x); });
    }
    std::string operator()(const std::vector<float>& xs) const { return join(xs, format_float); }
    std::string operator()(const std::vector<std::string>& xs) const { return join(xs, quote_string); }
    std::string operator()(const std::vector<bool>& xs) const {
      std::string s = "[";
      for (std::size_t i = 0; i < xs.size(); ++i) s += std::string(i ? ", " : "") + (xs[i] ? "true" : "false");
      return s + "]";
    }
    std::string operator()(const std::vector<Tensor>& xs) const { return join(xs, format_tensor); }
    std::string operator()(const Opaque& o) const {
      return "opaque(" + quote_string(o.kind) + ", " + std::to_string(o.bytes.size()) + " bytes)";
    }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace graphfuse
