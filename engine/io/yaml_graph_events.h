// Internal to io: a YAML graph document read with yaml-cpp's event parser, one element of
// `nodes` at a time, instead of as yaml-cpp's whole-document tree (about 5 KB and 24 us a
// graph node: a 10^7 node file did not fit in memory). Each element arrives as a small
// DocTree holding exactly what copy_yaml (yaml_values.h) would have made of it, same texts,
// styles, tags and positions, so the schema readers see no difference.
//
// It reads only documents whose tree copy it can promise: it gives up (ReadWhole) on an
// alias (the copy expands those, under the alias bound of docs/limits.md), a top-level value that is no
// mapping of the schema's keys (nodes, inputs, outputs, properties, each once), a `nodes`
// that is no list, and a document past the copy's value bound. The caller then reads the
// text whole, which reports what is wrong exactly as before.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "json_tree.h"
#include "yaml_values.h"

namespace graphfuse::textio {

/// The streaming read does not take this text: read it as a whole document.
struct ReadWhole {};

class YamlGraphEvents {
 public:
  /// Reads the first YAML document of src.text, calling `on_node` with each element of
  /// `nodes` (valid during the call only). Throws ReadWhole (see above), yaml-cpp's
  /// exceptions on malformed text (possibly after some `on_node` calls), and whatever
  /// `on_node` throws.
  void read(const YamlSource& src, const std::function<void(const DocRef&)>& on_node);

  /// The top-level `inputs`, `outputs` and `properties` values once read (null when absent).
  const DocRef* inputs() const { return inputs_ ? &*inputs_ : nullptr; }
  const DocRef* outputs() const { return outputs_ ? &*outputs_ : nullptr; }
  const DocRef* properties() const { return properties_ ? &*properties_ : nullptr; }

 private:
  friend class YamlGraphHandler;
  DocTree top_;  // the top-level values other than `nodes`
  std::optional<DocRef> inputs_, outputs_, properties_;
};

}  // namespace graphfuse::textio
