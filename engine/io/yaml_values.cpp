// Typed attribute values, tensors and value types from a DocTree (YAML and JSON).
#include "yaml_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "dsl/parser.h"
#include "text_values.h"
#include "graph/value_checks.h"

namespace graphfuse::textio {

SourceLoc YamlSource::loc(const YAML::Mark& m) const {
  if (m.line < 0) return SourceLoc{file};
  return SourceLoc{file, m.line + 1, m.column + 1};
}

SourceLoc YamlSource::loc(const DocRef& n) const {
  auto [line, column] = n.line_column();
  if (line < 0) return SourceLoc{file};
  return SourceLoc{file, line + 1, column + 1};
}

void YamlSource::fail(const SourceLoc& at, const std::string& msg) const {
  std::string line;
  auto lines = dsl::split_lines(text);
  if (at.line > 0 && static_cast<std::size_t>(at.line) <= lines->size())
    line = (*lines)[static_cast<std::size_t>(at.line) - 1];
  throw Error(at, msg, line);
}

namespace {

struct YamlCopy {
  DocTree& tree;
  const YamlSource& src;
  std::size_t left;  ///< values the document may still expand to

  std::uint32_t copy(const YAML::Node& n, int depth);
};

std::uint32_t YamlCopy::copy(const YAML::Node& n, int depth) {
  const YAML::Mark m = n.Mark();
  if (left == 0)
    src.fail(src.loc(m), "the YAML document expands to more than " +
                             std::to_string(std::min<std::size_t>(yaml_value_limit(src.text.size()),
                                                                  DocTree::kMaxValues)) + " values (" +
                             std::to_string(kYamlValuesPerByte) + " per byte of the file plus " +
                             std::to_string(kYamlExtraValues) +
                             "): anchors and aliases repeated inside each other; see docs/limits.md");
  --left;
  if (depth > kMaxNesting)
    src.fail(src.loc(m), "malformed YAML/JSON: values nested too deeply");
  DocTree::Kind kind = n.IsMap() ? DocTree::Kind::Map
                       : n.IsSequence() ? DocTree::Kind::Seq
                       : n.IsScalar()   ? DocTree::Kind::Scalar
                                        : DocTree::Kind::Null;
  std::uint32_t self = tree.add(kind, DocTree::at_line(m.line, m.column));
  if (kind == DocTree::Kind::Scalar) {
    set_yaml_scalar(tree, self, n.Scalar(), n.Tag());
  } else if (kind == DocTree::Kind::Seq) {
    for (const auto& e : n) tree.append(self, copy(e, depth + 1));
  } else if (kind == DocTree::Kind::Map) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      tree.append(self, copy(it->first, depth + 1));
      tree.append(self, copy(it->second, depth + 1));
    }
  }
  return self;
}

}  // namespace

void set_yaml_scalar(DocTree& tree, std::uint32_t self, const std::string& value, const std::string& tag) {
  tree.node(self).text = tree.keep(value);
  // yaml-cpp's tags: "?" a plain scalar, "!" a quoted one, anything else written out.
  if (tag == "!") tree.node(self).style = DocTree::Style::Quoted;
  else if (tag != "?") tree.set_tag(self, tag);
}

std::uint32_t copy_yaml(const YAML::Node& n, DocTree& tree, const YamlSource& src) {
  YamlCopy c{tree, src, std::min<std::size_t>(yaml_value_limit(src.text.size()), DocTree::kMaxValues)};
  return c.copy(n, 0);
}

namespace {

enum class Kind { Int, Float, String, Bool };

/// A scalar's typed reading; see yaml_attr_value for the rules.
struct Scalar {
  Kind kind = Kind::String;
  std::int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// [-+]? (digits [. digits*] | . digits) ([eE] [-+]? digits)? with a '.' or an exponent.
bool float_syntax(std::string_view s) {
  std::size_t p = 0;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
  std::size_t int_start = p;
  while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) ++p;
  bool mantissa = p > int_start, marked = false;
  if (p < s.size() && s[p] == '.') {
    marked = true;
    std::size_t f = ++p;
    while (p < s.size() && std::isdigit(static_cast<unsigned char>(s[p]))) ++p;
    mantissa = mantissa || p > f;
  }
  if (!mantissa) return false;
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    marked = true;
    ++p;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
    if (!all_digits(s.substr(p))) return false;
    p = s.size();
  }
  return marked && p == s.size();
}

Scalar read_scalar(const DocRef& n, const YamlSource& src, const std::string& what) {
  Scalar out;
  out.s = n.scalar();
  if (n.style() == DocTree::Style::Quoted) return out;  // quoted: always a string
  if (n.style() == DocTree::Style::Tagged) {
    if (n.tag() == "tag:yaml.org,2002:str") return out;
    src.fail(n, what + ": unsupported YAML tag '" + n.tag() + "'");
  }
  const std::string& s = out.s;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    out.kind = Kind::Bool;
    out.b = s[0] == 't' || s[0] == 'T';
    return out;
  }
  std::string_view body(s);
  bool neg = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (all_digits(body)) {
    out.kind = Kind::Int;
    std::string digits = (neg ? "-" : "") + std::string(body);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out.i);
    if (r.ec != std::errc()) src.fail(n, what + ": integer " + s + " out of int64 range");
    return out;
  }
  static const std::set<std::string_view> kInf = {".inf", ".Inf", ".INF", "inf", "Infinity"};
  static const std::set<std::string_view> kNan = {".nan", ".NaN", ".NAN", "nan", "NaN"};
  if (kInf.count(body)) {
    out.kind = Kind::Float;
    out.d = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return out;
  }
  if (kNan.count(s)) {
    out.kind = Kind::Float;
    out.d = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  if (float_syntax(s)) {
    out.kind = Kind::Float;
    std::string text(body);
    if (text[0] == '.') text.insert(text.begin(), '0');
    auto r = std::from_chars(text.data(), text.data() + text.size(), out.d);
    if (r.ec != std::errc()) src.fail(n, what + ": number " + s + " out of range");
    if (neg) out.d = -out.d;
  }
  return out;
}

float narrow(double d, const DocRef& n, const YamlSource& src, const std::string& what) {
  float f;
  if (!to_float32(d, f)) src.fail(n, what + ": float out of float32 range");
  return f;
}

const DocRef* find_key(const std::vector<YamlEntry>& es, const char* key) {
  for (const auto& e : es)
    if (e.key == key) return &e.value;
  return nullptr;
}

void only_keys(const std::vector<YamlEntry>& es, std::initializer_list<const char*> keys,
               const YamlSource& src, const std::string& what) {
  for (const auto& e : es)
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return e.key == k; })) {
      std::string list;
      for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
      src.fail(e.key_node, what + ": unknown key '" + e.key + "' (expected " + list + ")");
    }
}

std::vector<std::int64_t> int_list(const DocRef& n, const YamlSource& src, const std::string& what) {
  if (!n.is_seq()) src.fail(n, what + " must be a list of integers");
  std::vector<std::int64_t> out;
  for (const auto& e : n) {
    Scalar s = e.is_scalar() ? read_scalar(e, src, what) : Scalar{};
    if (!e.is_scalar() || s.kind != Kind::Int) src.fail(e, what + " must be a list of integers");
    out.push_back(s.i);
  }
  return out;
}

DType dtype_of(const DocRef& n, const YamlSource& src, const std::string& what) {
  if (!n.is_scalar()) src.fail(n, what + ": expected an element type such as float32");
  Scalar s = read_scalar(n, src, what);
  if (s.kind == Kind::Int) {  // an ONNX type number with no name (an int32 there)
    if (s.i < 0 || s.i > 0x7fffffff) src.fail(n, what + ": element type number " + s.s + " is out of range");
    return static_cast<DType>(s.i);
  }
  auto t = dtype_from_name(s.s);
  if (!t) src.fail(n, what + ": unknown element type '" + s.s + "'");
  return *t;
}

Tensor read_tensor(const DocRef& n, const std::vector<YamlEntry>& es, const YamlSource& src,
                   const std::string& what) {
  only_keys(es, {"tensor", "shape", "data"}, src, what);
  DType dtype = dtype_of(*find_key(es, "tensor"), src, what);
  const DocRef* shape = find_key(es, "shape");
  if (!shape) src.fail(n, what + ": a tensor needs a `shape` list ([] for a scalar)");
  const DocRef* data = find_key(es, "data");
  std::vector<Element> elems;
  if (data) {
    if (!data->is_seq()) src.fail(*data, what + ": tensor `data` must be a list of numbers");
    for (const auto& e : *data) {
      Scalar s = e.is_scalar() ? read_scalar(e, src, what) : Scalar{};
      if (!e.is_scalar() || s.kind == Kind::String) src.fail(e, what + ": tensor data must be numbers");
      if (s.kind == Kind::Float) elems.push_back(Element{false, 0, s.d});
      else elems.push_back(Element{true, s.kind == Kind::Bool ? std::int64_t{s.b} : s.i, 0});
    }
  }
  Tensor out;
  std::string err = make_tensor(dtype, int_list(*shape, src, what + ": tensor shape"), data != nullptr, elems, out);
  if (!err.empty()) src.fail(data ? *data : n, what + ": " + err);
  return out;
}

}  // namespace

std::vector<YamlEntry> yaml_entries(const DocRef& map, const YamlSource& src, const std::string& what) {
  if (!map.is_map()) src.fail(map, what + ": expected a mapping");
  std::vector<YamlEntry> out;
  out.reserve(map.size() / 2);
  for (auto it = map.begin(); it != map.end(); ++it) {
    DocRef k = *it;
    DocRef v = *++it;
    if (!k.is_scalar()) src.fail(k, what + ": keys must be plain names");
    std::string key(k.scalar());
    for (const auto& e : out)
      if (e.key == key) src.fail(k, what + ": duplicate key '" + key + "'");
    out.push_back(YamlEntry{std::move(key), k, v});
  }
  return out;
}

std::string yaml_name(const DocRef& n, const YamlSource& src, const std::string& what) {
  if (!n.is_scalar() || n.scalar().empty()) src.fail(n, what + " must be a non-empty name");
  return std::string(n.scalar());
}

AttrValue yaml_attr_value(const DocRef& n, const YamlSource& src, const std::string& what) {
  if (n.is_scalar()) {
    Scalar s = read_scalar(n, src, what);
    switch (s.kind) {
      case Kind::Int: return s.i;
      case Kind::Float: return narrow(s.d, n, src, what);
      case Kind::Bool: return s.b;
      default: return s.s;
    }
  }
  if (n.is_map()) {
    auto es = yaml_entries(n, src, what);
    if (find_key(es, "tensor")) return read_tensor(n, es, src, what);
    if (const DocRef* kind = find_key(es, "opaque")) {
      only_keys(es, {"opaque", "bytes"}, src, what);
      const DocRef* bytes = find_key(es, "bytes");
      Opaque o{yaml_name(*kind, src, what + ": opaque kind"), {}};
      if (!bytes || !bytes->is_scalar() || !base64_decode(bytes->scalar(), o.bytes))
        src.fail(bytes ? *bytes : n, what + ": opaque `bytes` must be base64");
      return o;
    }
    src.fail(n, what + ": a mapping value must be a tensor {tensor: float32, shape: [..], data: [..]}");
  }
  if (!n.is_seq()) src.fail(n, what + " has no value");
  std::vector<ListElement> elems;
  std::vector<DocRef> nodes;  // for positions in messages
  for (const auto& e : n) {
    nodes.push_back(e);
    if (e.is_map()) {
      auto es = yaml_entries(e, src, what);
      if (!find_key(es, "tensor")) src.fail(e, what + ": list elements may be numbers, strings, bools or tensors");
      elems.emplace_back(read_tensor(e, es, src, what));
    } else if (e.is_scalar()) {
      Scalar s = read_scalar(e, src, what);
      switch (s.kind) {
        case Kind::Int: elems.emplace_back(s.i); break;
        case Kind::Float: elems.emplace_back(s.d); break;
        case Kind::Bool: elems.emplace_back(s.b); break;
        default: elems.emplace_back(std::move(s.s)); break;
      }
    } else {
      src.fail(e, what + ": lists of lists are not attribute values");
    }
  }
  AttrValue out;
  std::size_t bad = 0;
  std::string err = make_list(std::move(elems), out, bad);
  if (!err.empty()) src.fail(nodes[bad], what + ": " + err);
  return out;
}

ValueType yaml_value_type(const DocRef& n, const YamlSource& src, const std::string& what) {
  auto es = yaml_entries(n, src, what);
  only_keys(es, {"dtype", "shape"}, src, what);
  ValueType t;
  if (const DocRef* d = find_key(es, "dtype")) t.dtype = dtype_of(*d, src, what);
  if (const DocRef* shape = find_key(es, "shape")) {
    if (!shape->is_seq()) src.fail(*shape, what + ": shape must be a list");
    t.shape_known = true;
    bool any_param = false;
    std::vector<std::string> params;
    for (const auto& e : *shape) {
      Scalar s = e.is_scalar() ? read_scalar(e, src, what) : Scalar{};
      if (!e.is_scalar() || (s.kind != Kind::Int && s.kind != Kind::String) || s.s.empty())
        src.fail(e, what + ": a dimension is an integer (-1 unknown) or a name");
      t.shape.push_back(s.kind == Kind::Int ? s.i : -1);
      params.push_back(s.kind == Kind::String ? s.s : std::string());
      any_param = any_param || s.kind == Kind::String;
    }
    if (any_param) t.dim_params = std::move(params);
  }
  // The same check as the .gfb reader's, so every format refuses what another cannot write.
  if (std::string err = checks::value_type_problem(t); !err.empty()) src.fail(n, what + ": " + err);
  return t;
}

}  // namespace graphfuse::textio
