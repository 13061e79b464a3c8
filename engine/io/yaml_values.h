// Internal to io: typed attribute values, tensors and value types from yaml-cpp nodes
// (YAML and JSON alike), with errors at the node's file:line:column.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

/// Positions and messages for one YAML/JSON file.
struct YamlSource {
  std::string file;
  std::shared_ptr<const std::vector<std::string>> lines;

  SourceLoc loc(const YAML::Node& n) const;
  SourceLoc loc(const YAML::Mark& m) const;
  [[noreturn]] void fail(const SourceLoc& at, const std::string& msg) const;
  [[noreturn]] void fail(const YAML::Node& n, const std::string& msg) const { fail(loc(n), msg); }
};

/// An attribute value from YAML: plain scalars are int, float ('.' or exponent, also
/// .inf/.nan/NaN/Infinity), bool (true/false) or else string; quoted scalars are strings;
/// sequences are lists of one kind (ints and floats mix to floats, [] is ints); mappings
/// are tensors {tensor: dtype, shape: [...], data: [...]} or {opaque: kind, bytes: base64}.
AttrValue yaml_attr_value(const YAML::Node& n, const YamlSource& src, const std::string& what);

/// A value type {dtype: float32, shape: [1, 3, N, -1]}; {} is unknown.
ValueType yaml_value_type(const YAML::Node& n, const YamlSource& src, const std::string& what);

/// A scalar that must be a non-empty string (ids, op types, names).
std::string yaml_name(const YAML::Node& n, const YamlSource& src, const std::string& what);

/// One entry of a mapping.
struct YamlEntry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};
/// The entries of a mapping in file order, failing on a non-scalar or duplicate key
/// (yaml-cpp keeps both copies of a duplicate).
std::vector<YamlEntry> yaml_entries(const YAML::Node& map, const YamlSource& src, const std::string& what);

}  // namespace graphfuse::textio
