// Internal to io: typed attribute values, tensors and value types from a DocTree (YAML files
// copied from yaml-cpp's nodes, JSON values from simdjson: one set of typing rules for both),
// with errors at the value's file:line:column.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "json_tree.h"

namespace graphfuse::textio {

/// Positions and messages for one YAML/JSON file.
struct YamlSource {
  FileName file;
  /// The whole file; split into lines only when an error shows one (splitting a 10^6 node
  /// file up front cost more than parsing it).
  std::string_view text;

  SourceLoc loc(const DocRef& n) const;
  SourceLoc loc(const YAML::Mark& m) const;
  [[noreturn]] void fail(const SourceLoc& at, const std::string& msg) const;
  [[noreturn]] void fail(const DocRef& n, const std::string& msg) const { fail(loc(n), msg); }
};

/// Input limits of YAML documents (docs/limits.md). yaml-cpp shares an anchored value
/// between its aliases, but the copy expands every alias, so nested anchors ("billion
/// laughs": `a1: &a1 [*a0, *a0, ...]`) would grow exponentially: a 507-byte file took
/// 9.4 GB. Without aliases a document has at most about one value per byte of text.
constexpr std::size_t kYamlValuesPerByte = 2;
// 2^16: enough for any anchor reuse a graph file needs; 2^20 took 3 s under ASan+UBSan and hit
// the fuzzers' 5 s per-input limit on a loaded machine (fuzz/corpus/graph_yaml/regress-billion_laughs.yaml).
constexpr std::size_t kYamlExtraValues = std::size_t{1} << 16;  ///< what aliases may add
constexpr int kMaxNesting = 1000;  ///< lists/mappings inside each other (JSON's bound too)

/// The most values a document of `bytes` bytes may expand to.
constexpr std::size_t yaml_value_limit(std::size_t bytes) {
  return kYamlValuesPerByte * bytes + kYamlExtraValues;
}

/// Copies a yaml-cpp document into `tree`; returns the root's index. Fails (at the value
/// where the limit was passed) when the document expands to more than
/// yaml_value_limit(src.text.size()) values or nests deeper than kMaxNesting.
std::uint32_t copy_yaml(const YAML::Node& n, DocTree& tree, const YamlSource& src);

/// Makes tree node `self` the scalar `value` that yaml-cpp read with `tag` ("?" plain, "!"
/// quoted, anything else an explicit tag): the copy's rule, shared with the streaming read.
void set_yaml_scalar(DocTree& tree, std::uint32_t self, const std::string& value, const std::string& tag);

/// An attribute value from YAML or JSON: plain scalars are int, float ('.' or exponent, also
/// .inf/.nan/NaN/Infinity), bool (true/false) or else string; quoted scalars are strings;
/// sequences are lists of one kind (ints and floats mix to floats, [] is ints); mappings
/// are tensors {tensor: dtype, shape: [...], data: [...]} or {opaque: kind, bytes: base64}.
AttrValue yaml_attr_value(const DocRef& n, const YamlSource& src, const std::string& what);

/// A value type {dtype: float32, shape: [1, 3, N, -1]}; {} is unknown.
ValueType yaml_value_type(const DocRef& n, const YamlSource& src, const std::string& what);

/// A scalar that must be a non-empty string (ids, op types, names).
std::string yaml_name(const DocRef& n, const YamlSource& src, const std::string& what);

/// One entry of a mapping.
struct YamlEntry {
  std::string key;
  DocRef key_node;
  DocRef value;
};
/// The entries of a mapping in file order, failing on a non-scalar or duplicate key
/// (yaml-cpp keeps both copies of a duplicate).
std::vector<YamlEntry> yaml_entries(const DocRef& map, const YamlSource& src, const std::string& what);

}  // namespace graphfuse::textio
