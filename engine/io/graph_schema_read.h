// Internal to io: the graph schema of the YAML and JSON files (docs/graph-formats.md), read
// once for every reading of them. A node's values, by key (NodeParts), become one record in
// a NodeBatch (NodeReader::read), which a sink adds to a graph (graph_node_sinks.h); the
// top-level mapping's keys are read by read_top, its inputs, outputs and properties by the
// sinks' finish. Each rule takes a Check (yaml_values.h): the fast readings are quiet (a
// problem is a false, and the caller reads the text again), the diagnostic reading is loud
// (a problem is the Error the caller gets), so both take exactly the same files.
//
// Where the node's values come from is the caller's: a DocTree mapping (YAML, and the JSON
// diagnostic reading: parts()), or the JSON scanner's walk of the file, which fills the
// parts straight from the text and may hand over an attribute set or type list it read
// before from the same text (json_scan.h).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graphfuse/graph.h"
#include "json_tree.h"
#include "yaml_values.h"

namespace graphfuse::textio {

/// Nodes read but not yet added to a graph: their references are still names. The texts
/// are views into the text read (which outlives the batch) or into `kept`.
struct NodeBatch {
  struct Node {
    std::string id;
    std::uint32_t id_hash = 0;  // GraphTuning::id_hash(id), computed by the reading thread
    OpType op;
    Attributes attrs;
    std::uint64_t pos = DocTree::kNoPos;  // the node's DocTree position (see Positions)
    std::uint32_t inputs_begin = 0, inputs_end = 0;
    std::uint32_t outputs_begin = 0, outputs_end = 0;
    const std::vector<ValueType>* types = nullptr;  // null: none given
  };
  std::vector<Node> nodes;
  std::vector<std::string_view> inputs;     // empty: no value (null or "")
  std::vector<std::uint32_t> input_hashes;  // GraphTuning::id_hash of each of inputs
  std::vector<std::uint64_t> input_pos;     // DocTree position of each of inputs
  std::vector<std::string> output_names;
  std::deque<std::string> kept;                   // names that are no view into the text
  std::deque<std::vector<ValueType>> kept_types;  // type lists no cache holds
  void clear() {
    nodes.clear();
    inputs.clear();
    input_hashes.clear();
    input_pos.clear();
    output_names.clear();
    kept.clear();
    kept_types.clear();
  }
};

/// DocTree positions as file positions: byte offsets through a LineCursor (JSON), else
/// yaml-cpp's line and column (DocTree::at_line).
struct Positions {
  FileName file;
  LineCursor* cursor = nullptr;
  SourceLoc at(std::uint64_t pos) const {
    if (pos == DocTree::kNoPos) return SourceLoc{file};
    if (cursor) {
      auto [line, column] = cursor->at(pos);
      return SourceLoc{file, line + 1, column + 1};
    }
    return SourceLoc{file, static_cast<int>(pos >> 32) + 1, static_cast<int>(pos & 0xffffffffu) + 1};
  }
};

/// A node's values by key. `node` is the mapping (positions of whole-node messages; may be
/// a null DocRef when quiet), `pos` its DocTree position.
struct NodeParts {
  enum Key { kId, kOp, kInputs, kOutputs, kTypes, kAttrs, kKeys };
  DocRef node;
  std::uint64_t pos = DocTree::kNoPos;
  DocRef part[kKeys];
  unsigned seen = 0;  // bit k: key k was given
  // What the JSON scanner already read from the same text (quiet readings only).
  const Attributes* attrs_read = nullptr;
  const std::vector<ValueType>* types_read = nullptr;
  bool copy_types = false;  // types_read does not outlive the batch: copy it

  bool has(Key k) const { return seen & (1u << k); }
  /// Files `value` under key `k`; false when k is given twice.
  bool set(Key k, const DocRef& value) {
    if (has(k)) return false;
    seen |= 1u << k;
    part[k] = value;
    return true;
  }
};

/// The node key a mapping key names; NodeParts::kKeys for none.
NodeParts::Key node_key(std::string_view key);

/// The top-level mapping's values.
struct TopParts {
  DocRef nodes, inputs, outputs, properties;
  bool has_nodes = false, has_inputs = false, has_outputs = false, has_properties = false;
};

/// The top-level mapping `root` (a null DocRef: an empty document): one of the schema's keys
/// each, with `nodes` a list. Its elements are not looked at.
bool read_top(const DocRef& root, const Check& c, TopParts& out);

class NodeReader {
 public:
  /// `take_outputs`: whether a node may have `outputs` (the YAML in-order reading leaves
  /// them to GraphBuilder). `text`: the text names may be views into (others are copied
  /// into the batch).
  NodeReader(const Check& c, bool take_outputs = true) : c_(c), take_outputs_(take_outputs) {}
  void set_text(std::string_view text) { text_ = text; }
  const Check& check() const { return c_; }

  /// The parts of the node mapping `n`: its keys, each once and the schema's.
  bool parts(const DocRef& n, NodeParts& p) const;
  /// The node into `b`: its names, op type, inputs, outputs, types and attributes.
  bool read(const NodeParts& p, NodeBatch& b);

  /// A node's `attributes` mapping; `what` names the node (loud).
  bool attributes(const DocRef& n, const std::string& what, Attributes& out) const;
  /// A node's `types` list, each a value type (its length is read() 's to check).
  bool types(const DocRef& n, const std::string& what, std::vector<ValueType>& out) const;

 private:
  template <class What>
  bool name(const DocRef& n, const What& what, std::string_view& out) const;
  OpType op_type(std::string_view name);
  std::string_view view(std::string_view s, NodeBatch& b) const;

  Check c_;
  bool take_outputs_;
  std::string_view text_;
  std::vector<std::pair<std::string, OpType>> ops_;  // op types met so far (interning takes a lock)
};

}  // namespace graphfuse::textio
