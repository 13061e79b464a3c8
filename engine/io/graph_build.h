// Internal to io: builds a Graph from nodes as written in a file (any order, references by
// name), reporting unknown references, duplicates, clashes and cycles at their file positions.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

/// Splits "name:k" at the last ':' when k is a number of up to 7 digits; false otherwise.
bool split_port(std::string_view s, std::string& name, std::uint32_t& port);

/// A value named in a file: a node id (`conv`), `id:k`, or an output name.
struct PendingRef {
  std::string name;
  int port = -1;        ///< `:k` written separately (.graph text); -1 when not
  bool absent = false;  ///< an absent optional input (`_` in text, null in YAML)
  SourceLoc loc;
};

/// A node as written in a file.
struct PendingNode {
  std::string id;
  std::string op;
  std::vector<PendingRef> inputs;
  Attributes attrs;
  /// One entry per output ("" = the default name, `id` / `id:k`); empty means one output.
  std::vector<std::string> output_names;
  /// Parallel to the outputs when given; empty when the file says nothing about types.
  std::vector<ValueType> output_types;
  SourceLoc loc;
};

/// Collects nodes, graph inputs and outputs, then adds the nodes to a Graph producers
/// first (keeping file order where the file already is in order) and checks everything a
/// file can get wrong, naming the file position of the offending node or reference.
class GraphBuilder {
 public:
  /// Room for `n` nodes: a 10^6 node file otherwise spends a tenth of its load regrowing
  /// the node vector and rehashing the id index.
  void reserve(std::size_t n) {
    nodes_.reserve(n);
    grow_ids(n);
  }
  /// Throws Error on a duplicate id (at the second definition).
  void add_node(PendingNode n);
  bool has_node(const std::string& id) const;
  /// Declares a graph input; `ref` must name a node (usually an Input node).
  void add_graph_input(PendingRef ref) { inputs_.push_back(std::move(ref)); }
  void add_graph_output(PendingRef ref) { outputs_.push_back(std::move(ref)); }
  /// Resolves, orders, checks and builds. `file` becomes Graph::source_file.
  Graph build(const std::string& file);

 private:
  struct Resolved {
    std::size_t node = 0;
    std::uint32_t port = 0;
  };
  /// `user()` names the reference in an error; it is called only then (building that text
  /// for each of a 10^6 node file's inputs cost more than resolving them).
  template <class User>
  Resolved resolve(const PendingRef& r, const User& user) const;
  void index_output_names();
  /// Node indexes producers first; node i's resolved inputs are resolved[at[i] .. at[i + 1]).
  std::vector<std::size_t> order(const std::vector<Resolved>& resolved, const std::vector<std::size_t>& at) const;

  std::vector<PendingNode> nodes_;
  std::vector<PendingRef> inputs_;
  std::vector<PendingRef> outputs_;
  // Node id -> index in nodes_: open addressing over (32-bit hash, index + 1) slots, the key
  // compared against nodes_[index].id. unordered_map's node chasing was a fifth of a 10^6
  // node load (one insert and ~2 lookups per node, each a few cache misses).
  static constexpr std::size_t kNoId = static_cast<std::size_t>(-1);
  std::size_t find_id(std::string_view id) const;
  /// Indexes nodes_[i] by its id; returns the index already holding that id, or kNoId.
  std::size_t insert_id(std::size_t i);
  void grow_ids(std::size_t n);
  static std::uint32_t id_hash(std::string_view id);
  std::vector<std::uint64_t> id_slots_;  // 0 empty; else hash << 32 | (index + 1)
  std::size_t id_count_ = 0;
  std::unordered_map<std::string, Resolved> by_output_name_;
};

}  // namespace graphfuse::textio
