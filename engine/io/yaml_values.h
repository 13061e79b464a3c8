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

/// How a reading meets a problem in the file. A fast reading (quiet) stops: the function
/// returns false and the caller reads the text again through the diagnostic reading, which
/// says what is wrong. The diagnostic reading (loud) throws the Error its caller gets, at
/// the value's file:line:column with the line. One set of rules serves both, so what the
/// fast reading takes is what the diagnostic one takes.
class Check {
 public:
  static Check quiet(const YamlSource& src) { return Check(src, false); }
  static Check loud(const YamlSource& src) { return Check(src, true); }
  bool loud() const { return loud_; }
  const YamlSource& src() const { return *src_; }
  /// False, or (loud) the Error `msg()` at n; msg is called only then.
  template <class Msg>
  bool fail(const DocRef& n, const Msg& msg) const {
    if (loud_) src_->fail(n, msg());
    return false;
  }
  template <class Msg>
  bool fail(const SourceLoc& at, const Msg& msg) const {
    if (loud_) src_->fail(at, msg());
    return false;
  }
  /// `what` when loud; an empty text when quiet (messages are not built then).
  template <class What>
  std::string name(const What& what) const {
    return loud_ ? std::string(what()) : std::string();
  }

 private:
  Check(const YamlSource& src, bool loud) : src_(&src), loud_(loud) {}
  const YamlSource* src_;
  bool loud_;
};

/// An attribute value from YAML or JSON: plain scalars are int, float ('.' or exponent, also
/// .inf/.nan/NaN/Infinity), bool (true/false) or else string; quoted scalars are strings;
/// sequences are lists of one kind (ints and floats mix to floats, [] is ints); mappings
/// are tensors {tensor: dtype, shape: [...], data: [...]} or {opaque: kind, bytes: base64}.
/// `what` names the value in a message. False (quiet) where the value breaks the rules.
bool yaml_attr_value(const DocRef& n, const Check& c, const std::string& what, AttrValue& out);

/// A value type {dtype: float32, shape: [1, 3, N, -1]}; {} is unknown.
bool yaml_value_type(const DocRef& n, const Check& c, const std::string& what, ValueType& out);

/// One entry of a mapping.
struct YamlEntry {
  std::string key;
  DocRef key_node;
  DocRef value;
};
/// The entries of a mapping in file order, refusing a non-scalar or duplicate key
/// (yaml-cpp keeps both copies of a duplicate).
bool yaml_entries(const DocRef& map, const Check& c, const std::string& what, std::vector<YamlEntry>& out);

}  // namespace graphfuse::textio
