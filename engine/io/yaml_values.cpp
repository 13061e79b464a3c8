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

// Each rule below returns false where the value breaks it: Check::fail says so (loud) or
// just stops (quiet). The messages name the value by `what`, built only when loud.

bool read_scalar(const DocRef& n, const Check& c, const std::string& what, Scalar& out) {
  out.s = n.scalar();
  if (n.style() == DocTree::Style::Quoted) return true;  // quoted: always a string
  if (n.style() == DocTree::Style::Tagged) {
    if (n.tag() == "tag:yaml.org,2002:str") return true;
    return c.fail(n, [&] { return what + ": unsupported YAML tag '" + n.tag() + "'"; });
  }
  const std::string& s = out.s;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    out.kind = Kind::Bool;
    out.b = s[0] == 't' || s[0] == 'T';
    return true;
  }
  std::string_view body(s);
  bool neg = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  if (all_digits(body)) {
    out.kind = Kind::Int;
    std::string digits = (neg ? "-" : "") + std::string(body);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out.i);
    if (r.ec != std::errc()) return c.fail(n, [&] { return what + ": integer " + s + " out of int64 range"; });
    return true;
  }
  static const std::set<std::string_view> kInf = {".inf", ".Inf", ".INF", "inf", "Infinity"};
  static const std::set<std::string_view> kNan = {".nan", ".NaN", ".NAN", "nan", "NaN"};
  if (kInf.count(body)) {
    out.kind = Kind::Float;
    out.d = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (kNan.count(s)) {
    out.kind = Kind::Float;
    out.d = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (float_syntax(s)) {
    out.kind = Kind::Float;
    std::string text(body);
    if (text[0] == '.') text.insert(text.begin(), '0');
    auto r = std::from_chars(text.data(), text.data() + text.size(), out.d);
    if (r.ec != std::errc()) return c.fail(n, [&] { return what + ": number " + s + " out of range"; });
    if (neg) out.d = -out.d;
  }
  return true;
}

bool narrow(double d, const DocRef& n, const Check& c, const std::string& what, float& f) {
  if (!to_float32(d, f)) return c.fail(n, [&] { return what + ": float out of float32 range"; });
  return true;
}

const DocRef* find_key(const std::vector<YamlEntry>& es, const char* key) {
  for (const auto& e : es)
    if (e.key == key) return &e.value;
  return nullptr;
}

bool only_keys(const std::vector<YamlEntry>& es, std::initializer_list<const char*> keys, const Check& c,
               const std::string& what) {
  for (const auto& e : es)
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return e.key == k; }))
      return c.fail(e.key_node, [&] {
        std::string list;
        for (const char* k : keys) list += std::string(list.empty() ? "" : ", ") + k;
        return what + ": unknown key '" + e.key + "' (expected " + list + ")";
      });
  return true;
}

bool int_list(const DocRef& n, const Check& c, const std::string& what, std::vector<std::int64_t>& out) {
  auto bad = [&] { return what + " must be a list of integers"; };
  if (!n.is_seq()) return c.fail(n, bad);
  for (const auto& e : n) {
    Scalar s;
    if (e.is_scalar() && !read_scalar(e, c, what, s)) return false;
    if (!e.is_scalar() || s.kind != Kind::Int) return c.fail(e, bad);
    out.push_back(s.i);
  }
  return true;
}

bool dtype_of(const DocRef& n, const Check& c, const std::string& what, DType& out) {
  if (!n.is_scalar()) return c.fail(n, [&] { return what + ": expected an element type such as float32"; });
  Scalar s;
  if (!read_scalar(n, c, what, s)) return false;
  if (s.kind == Kind::Int) {  // an ONNX type number with no name (an int32 there)
    if (s.i < 0 || s.i > 0x7fffffff)
      return c.fail(n, [&] { return what + ": element type number " + s.s + " is out of range"; });
    out = static_cast<DType>(s.i);
    return true;
  }
  auto t = dtype_from_name(s.s);
  if (!t) return c.fail(n, [&] { return what + ": unknown element type '" + s.s + "'"; });
  out = *t;
  return true;
}

bool read_tensor(const DocRef& n, const std::vector<YamlEntry>& es, const Check& c, const std::string& what,
                 Tensor& out) {
  if (!only_keys(es, {"tensor", "shape", "data"}, c, what)) return false;
  DType dtype{};
  if (!dtype_of(*find_key(es, "tensor"), c, what, dtype)) return false;
  const DocRef* shape = find_key(es, "shape");
  if (!shape) return c.fail(n, [&] { return what + ": a tensor needs a `shape` list ([] for a scalar)"; });
  const DocRef* data = find_key(es, "data");
  std::vector<Element> elems;
  if (data) {
    if (!data->is_seq()) return c.fail(*data, [&] { return what + ": tensor `data` must be a list of numbers"; });
    for (const auto& e : *data) {
      Scalar s;
      if (e.is_scalar() && !read_scalar(e, c, what, s)) return false;
      if (!e.is_scalar() || s.kind == Kind::String) return c.fail(e, [&] { return what + ": tensor data must be numbers"; });
      if (s.kind == Kind::Float) elems.push_back(Element{false, 0, s.d});
      else elems.push_back(Element{true, s.kind == Kind::Bool ? std::int64_t{s.b} : s.i, 0});
    }
  }
  std::vector<std::int64_t> dims;
  if (!int_list(*shape, c, c.loud() ? what + ": tensor shape" : what, dims)) return false;
  std::string err = make_tensor(dtype, std::move(dims), data != nullptr, elems, out);
  if (!err.empty()) return c.fail(data ? *data : n, [&] { return what + ": " + err; });
  return true;
}

/// A scalar that must be a non-empty string (ids, op types, names).
bool name_of(const DocRef& n, const Check& c, const std::string& what, std::string& out) {
  if (!n.is_scalar() || n.scalar().empty()) return c.fail(n, [&] { return what + " must be a non-empty name"; });
  out = std::string(n.scalar());
  return true;
}

}  // namespace

bool yaml_entries(const DocRef& map, const Check& c, const std::string& what, std::vector<YamlEntry>& out) {
  if (!map.is_map()) return c.fail(map, [&] { return what + ": expected a mapping"; });
  out.reserve(map.size() / 2);
  for (auto it = map.begin(); it != map.end(); ++it) {
    DocRef k = *it;
    DocRef v = *++it;
    if (!k.is_scalar()) return c.fail(k, [&] { return what + ": keys must be plain names"; });
    std::string key(k.scalar());
    for (const auto& e : out)
      if (e.key == key) return c.fail(k, [&] { return what + ": duplicate key '" + key + "'"; });
    out.push_back(YamlEntry{std::move(key), k, v});
  }
  return true;
}

bool yaml_attr_value(const DocRef& n, const Check& c, const std::string& what, AttrValue& out) {
  if (n.is_scalar()) {
    Scalar s;
    if (!read_scalar(n, c, what, s)) return false;
    switch (s.kind) {
      case Kind::Int: out = s.i; return true;
      case Kind::Float: {
        float f = 0;
        if (!narrow(s.d, n, c, what, f)) return false;
        out = f;
        return true;
      }
      case Kind::Bool: out = s.b; return true;
      default: out = std::move(s.s); return true;
    }
  }
  if (n.is_map()) {
    std::vector<YamlEntry> es;
    if (!yaml_entries(n, c, what, es)) return false;
    if (find_key(es, "tensor")) {
      Tensor t;
      if (!read_tensor(n, es, c, what, t)) return false;
      out = std::move(t);
      return true;
    }
    if (const DocRef* kind = find_key(es, "opaque")) {
      if (!only_keys(es, {"opaque", "bytes"}, c, what)) return false;
      const DocRef* bytes = find_key(es, "bytes");
      Opaque o;
      if (!name_of(*kind, c, c.loud() ? what + ": opaque kind" : what, o.kind)) return false;
      if (!bytes || !bytes->is_scalar() || !base64_decode(bytes->scalar(), o.bytes))
        return c.fail(bytes ? *bytes : n, [&] { return what + ": opaque `bytes` must be base64"; });
      out = std::move(o);
      return true;
    }
    return c.fail(n, [&] { return what + ": a mapping value must be a tensor {tensor: float32, shape: [..], data: [..]}"; });
  }
  if (!n.is_seq()) return c.fail(n, [&] { return what + " has no value"; });
  std::vector<ListElement> elems;
  std::vector<DocRef> nodes;  // for positions in messages
  for (const auto& e : n) {
    nodes.push_back(e);
    if (e.is_map()) {
      std::vector<YamlEntry> es;
      if (!yaml_entries(e, c, what, es)) return false;
      if (!find_key(es, "tensor"))
        return c.fail(e, [&] { return what + ": list elements may be numbers, strings, bools or tensors"; });
      Tensor t;
      if (!read_tensor(e, es, c, what, t)) return false;
      elems.emplace_back(std::move(t));
    } else if (e.is_scalar()) {
      Scalar s;
      if (!read_scalar(e, c, what, s)) return false;
      switch (s.kind) {
        case Kind::Int: elems.emplace_back(s.i); break;
        case Kind::Float: elems.emplace_back(s.d); break;
        case Kind::Bool: elems.emplace_back(s.b); break;
        default: elems.emplace_back(std::move(s.s)); break;
      }
    } else {
      return c.fail(e, [&] { return what + ": lists of lists are not attribute values"; });
    }
  }
  std::size_t bad = 0;
  std::string err = make_list(std::move(elems), out, bad);
  if (!err.empty()) return c.fail(nodes[bad], [&] { return what + ": " + err; });
  return true;
}

bool yaml_value_type(const DocRef& n, const Check& c, const std::string& what, ValueType& t) {
  std::vector<YamlEntry> es;
  if (!yaml_entries(n, c, what, es) || !only_keys(es, {"dtype", "shape"}, c, what)) return false;
  t = ValueType{};
  if (const DocRef* d = find_key(es, "dtype"))
    if (!dtype_of(*d, c, what, t.dtype)) return false;
  if (const DocRef* shape = find_key(es, "shape")) {
    if (!shape->is_seq()) return c.fail(*shape, [&] { return what + ": shape must be a list"; });
    t.shape_known = true;
    bool any_param = false;
    std::vector<std::string> params;
    for (const auto& e : *shape) {
      Scalar s;
      if (e.is_scalar() && !read_scalar(e, c, what, s)) return false;
      if (!e.is_scalar() || (s.kind != Kind::Int && s.kind != Kind::String) || s.s.empty())
        return c.fail(e, [&] { return what + ": a dimension is an integer (-1 unknown) or a name"; });
      t.shape.push_back(s.kind == Kind::Int ? s.i : -1);
      params.push_back(s.kind == Kind::String ? s.s : std::string());
      any_param = any_param || s.kind == Kind::String;
    }
    if (any_param) t.dim_params = std::move(params);
  }
  // The same check as the .gfb reader's, so every format refuses what another cannot write.
  if (std::string err = checks::value_type_problem(t); !err.empty()) return c.fail(n, [&] { return what + ": " + err; });
  return true;
}

}  // namespace graphfuse::textio
