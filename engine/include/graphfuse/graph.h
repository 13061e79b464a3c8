// The graph IR: nodes, values, ordered inputs and use lists (Boost.Graph view on demand).
#pragma once

#include <cstdint>
#include <compare>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/error.h"
#include "graphfuse/input_list.h"

namespace graphfuse {

/// Interned operator name. Comparing two OpTypes compares integers. A domain-qualified
/// op keeps its domain as a dotted prefix: "com.microsoft.FusedConv".
class OpType {
 public:
  OpType() = default;
  /// Interns `name` (thread-safe); the same name always gives the same OpType.
  static OpType intern(std::string_view name);
  /// The OpType for `name` if it was ever interned (never interns).
  static std::optional<OpType> lookup(std::string_view name);
  std::string_view name() const;
  /// Domain part ("" when unqualified): "com.microsoft" for "com.microsoft.FusedConv".
  std::string_view domain() const;
  /// Name without the domain: "FusedConv".
  std::string_view local_name() const;
  std::uint32_t index() const { return id_; }
  bool valid() const { return id_ != 0; }
  friend bool operator==(OpType a, OpType b) { return a.id_ == b.id_; }
  friend auto operator<=>(OpType a, OpType b) { return a.id_ <=> b.id_; }

 private:
  explicit OpType(std::uint32_t id) : id_(id) {}
  std::uint32_t id_ = 0;
};

// NodeId (a node's stable handle, never reused within one Graph: removed nodes leave a
// hole), kNoNode and ValueRef come with InputList (graphfuse/input_list.h).

/// One use of a value: input `slot` of node `node`.
struct Use {
  NodeId node;
  std::uint32_t slot;
  friend bool operator==(Use, Use) = default;
  friend auto operator<=>(Use, Use) = default;
};

/// The uses of a node's outputs, in the order they were made: a forward range of Use
/// (range-for, begin/end, size, empty). Lists of many uses erase in O(1) by leaving a hole
/// that a later compaction removes (engine/graph/storage.h); iteration skips the holes,
/// which never outnumber the uses. Invalidated by any mutation of the graph.
class UseRange {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Use;
    using difference_type = std::ptrdiff_t;
    using pointer = const Use*;
    using reference = const Use&;
    iterator() = default;
    iterator(const Use* p, const Use* end) : p_(p), end_(end) { skip_(); }
    reference operator*() const { return *p_; }
    pointer operator->() const { return p_; }
    iterator& operator++() {
      ++p_;
      skip_();
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.p_ == b.p_; }

   private:
    void skip_() {
      while (p_ != end_ && p_->node == kNoNode) ++p_;
    }
    const Use* p_ = nullptr;
    const Use* end_ = nullptr;
  };
  UseRange() = default;
  /// `count` of the entries in [b, e) are uses; the others are holes (node kNoNode).
  UseRange(const Use* b, const Use* e, std::size_t count) : b_(b), e_(e), count_(count) {}
  iterator begin() const { return {b_, e_}; }
  iterator end() const { return {e_, e_}; }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  const Use* b_ = nullptr;
  const Use* e_ = nullptr;
  std::size_t count_ = 0;
};

/// What is known of a value's type; rank -1 = unknown shape, dim -1 = unknown dim.
struct ValueType {
  DType dtype = DType::Undefined;
  std::vector<std::int64_t> shape;
  bool shape_known = false;
  /// Symbolic dim names (ONNX dim_param) parallel to shape; empty strings where numeric.
  std::vector<std::string> dim_params;
  friend bool operator==(const ValueType&, const ValueType&) = default;
};

/// Per-output facts: an optional name (ONNX value names) and a type.
struct OutputInfo {
  std::string name;  ///< empty: named after the node ("id" for port 0, "id:k" otherwise)
  ValueType type;
  friend bool operator==(const OutputInfo&, const OutputInfo&) = default;
};

/// A node's outputs: used like a std::vector<OutputInfo> (size, [], at, front, back,
/// iteration, resize, push_back, ==). While every output is unnamed and untyped, which
/// is most nodes of a large graph, it stores only the count (16 bytes, no allocation);
/// the first mutable access to an element materialises the list. Reads through a
/// const reference never allocate, so concurrent readers are safe.
class OutputInfos {
 public:
  /// Random-access iterator over a const list (yields the shared default while the
  /// list is not materialised).
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = OutputInfo;
    using difference_type = std::ptrdiff_t;
    using pointer = const OutputInfo*;
    using reference = const OutputInfo&;
    const_iterator() = default;
    const_iterator(const OutputInfos* o, std::size_t k) : o_(o), k_(k) {}
    reference operator*() const { return (*o_)[k_]; }
    pointer operator->() const { return &(*o_)[k_]; }
    reference operator[](difference_type d) const { return (*o_)[k_ + static_cast<std::size_t>(d)]; }
    const_iterator& operator++() { ++k_; return *this; }
    const_iterator operator++(int) { auto t = *this; ++k_; return t; }
    const_iterator& operator--() { --k_; return *this; }
    const_iterator operator--(int) { auto t = *this; --k_; return t; }
    const_iterator& operator+=(difference_type d) { k_ += static_cast<std::size_t>(d); return *this; }
    const_iterator& operator-=(difference_type d) { k_ -= static_cast<std::size_t>(d); return *this; }
    friend const_iterator operator+(const_iterator i, difference_type d) { return i += d; }
    friend const_iterator operator+(difference_type d, const_iterator i) { return i += d; }
    friend const_iterator operator-(const_iterator i, difference_type d) { return i -= d; }
    friend difference_type operator-(const_iterator a, const_iterator b) {
      return static_cast<difference_type>(a.k_) - static_cast<difference_type>(b.k_);
    }
    friend bool operator==(const_iterator a, const_iterator b) { return a.k_ == b.k_; }
    friend auto operator<=>(const_iterator a, const_iterator b) { return a.k_ <=> b.k_; }

   private:
    const OutputInfos* o_ = nullptr;
    std::size_t k_ = 0;
  };
  using iterator = OutputInfo*;
  using value_type = OutputInfo;
  using size_type = std::size_t;

  OutputInfos() = default;
  explicit OutputInfos(std::size_t count) : count_(static_cast<std::uint32_t>(count)) {}
  OutputInfos(std::initializer_list<OutputInfo> items);
  OutputInfos(const std::vector<OutputInfo>& items);  // NOLINT: a vector converts, as before
  OutputInfos(const OutputInfos& o);
  OutputInfos& operator=(const OutputInfos& o);
  OutputInfos(OutputInfos&& o) noexcept;
  OutputInfos& operator=(OutputInfos&& o) noexcept;
  ~OutputInfos();

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const OutputInfo& operator[](std::size_t k) const;
  OutputInfo& operator[](std::size_t k);
  /// Bounds-checked access; throws std::out_of_range.
  const OutputInfo& at(std::size_t k) const;
  OutputInfo& at(std::size_t k);
  const OutputInfo& front() const { return (*this)[0]; }
  const OutputInfo& back() const { return (*this)[count_ - 1]; }
  OutputInfo& front() { return (*this)[0]; }
  OutputInfo& back() { return (*this)[count_ - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, count_}; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  iterator begin();
  iterator end() { return begin() + count_; }
  void resize(std::size_t count);
  void push_back(OutputInfo info);
  void clear();
  /// True while no output carries a name or a type (nothing is stored but the count).
  bool all_default() const { return items_ == nullptr; }
  friend bool operator==(const OutputInfos& a, const OutputInfos& b);

 private:
  void materialize_();
  OutputInfo* items_ = nullptr;  // count_ entries, or null while all are default
  std::uint32_t count_ = 0;      // last, so Node can put its op in the padding after it
};

/// A node. Input order is meaningful.
struct Node {
  std::string id;
  Attributes attrs;
  InputList inputs;  ///< up to three held in the record itself
  // `op` follows `outputs` so that it fits in the padding at the end of OutputInfos
  // (no_unique_address lets the compiler use it): 112 bytes a node instead of 120.
  [[no_unique_address]] OutputInfos outputs;  ///< size = number of outputs (>= 1)
  OpType op;
  SourceLoc loc;  ///< where the node was written, when loaded from text
};

/// Well-known op names used by the graph layer itself.
namespace ops {
inline constexpr std::string_view kInput = "Input";  ///< a graph input
inline constexpr std::string_view kConst = "Const";  ///< a constant / initializer (attr "value" tensor)
}  // namespace ops

struct GraphStorage;  // node records, use lists and the id index (engine/graph/storage.h)

/// A computation graph. All mutation goes through these methods, which keep the
/// per-node input lists, the use lists and the id index consistent. Node references
/// stay valid while nodes are added (records live in fixed chunks that never move).
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&);
  Graph& operator=(const Graph&);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // ---- building -------------------------------------------------------------------
  /// Adds a node; its inputs must refer to live nodes. Throws Error on a duplicate id.
  NodeId add_node(std::string id, OpType op, InputList inputs = {},
                  Attributes attrs = {}, std::uint32_t num_outputs = 1, SourceLoc loc = {});
  /// Adds a graph input node (op Input) and appends it to inputs().
  NodeId add_input(std::string id, ValueType type = {});
  /// Appends a graph output.
  void add_output(ValueRef v);
  /// Makes room for `nodes` nodes in the id index and the node records (loaders that know
  /// the count call it so that a million-node load does not rehash its way up, and so
  /// that the records' memory can be faulted in ahead of them). Purely an optimisation.
  void reserve(std::size_t nodes);

  // ---- queries --------------------------------------------------------------------
  bool alive(NodeId n) const;
  const Node& node(NodeId n) const;
  /// node(n).op, read from a compact array: scanning op types does not touch the nodes.
  OpType op(NodeId n) const;
  /// Mutable access to id-independent node data (attributes, output infos, loc).
  /// Use set_input / replace_all_uses to change edges and rename() to change ids.
  Attributes& attrs(NodeId n);
  OutputInfos& output_infos(NodeId n);
  std::optional<NodeId> find(std::string_view id) const;
  /// Number of live nodes.
  std::size_t size() const { return live_; }
  /// One past the highest NodeId ever issued (for dense per-node arrays).
  NodeId capacity() const;
  /// Live node ids in increasing order (insertion order).
  std::vector<NodeId> nodes() const;
  /// Calls f(id) for each live node in increasing id order.
  void for_each_node(const std::function<void(NodeId)>& f) const;
  /// Uses of value v, ordered by (consumer id, slot).
  std::vector<Use> consumers(ValueRef v) const;
  /// Every use of any output of n, in the order the uses were made; allocates nothing.
  /// The port a use reads is node(u.node).inputs[u.slot].port. Invalidated by mutation.
  UseRange uses(NodeId n) const;
  /// Number of uses of any output of n (graph outputs not counted).
  std::size_t use_count(NodeId n) const;
  std::size_t use_count(ValueRef v) const;
  /// True when v is a graph output.
  bool is_output(ValueRef v) const;
  /// True when any output of n is a graph output.
  bool has_graph_output(NodeId n) const;
  const std::vector<NodeId>& inputs() const { return inputs_; }
  const std::vector<ValueRef>& outputs() const { return outputs_; }
  /// The name of a value: the output's name if set, else "id" / "id:k".
  std::string value_name(ValueRef v) const;

  // ---- mutation -------------------------------------------------------------------
  /// Points input `slot` of n at v (the old edge is removed).
  void set_input(NodeId n, std::uint32_t slot, ValueRef v);
  /// Replaces n's whole input list.
  void set_inputs(NodeId n, InputList inputs);
  /// Changes n's op type.
  void set_op(NodeId n, OpType op);
  /// Replaces n's attributes. Prefer it to `attrs(n) = ...`: an identical small set
  /// already in the graph is shared rather than stored again (add_node does the same).
  void set_attrs(NodeId n, Attributes attrs);
  /// Changes n's number of outputs (uses of dropped ports must be gone).
  void set_num_outputs(NodeId n, std::uint32_t count);
  /// Renames a node (throws Error if the new id is taken).
  void rename(NodeId n, std::string new_id);
  /// Rewires every use of `from` (node inputs and graph outputs) to `to`.
  void replace_all_uses(ValueRef from, ValueRef to);
  /// Removes a node; it must have no remaining uses and not be a graph output.
  void remove_node(NodeId n);
  /// Replaces the list of graph outputs.
  void set_outputs(std::vector<ValueRef> outputs);
  void set_inputs_list(std::vector<NodeId> inputs);

  // ---- whole-graph ----------------------------------------------------------------
  /// Live nodes in a topological order (producers first). Deterministic: roots in id
  /// order, then nodes as their last input becomes ready (Kahn's algorithm, visiting
  /// uses in the order they were made). Throws Error naming a node on a cycle.
  std::vector<NodeId> topological_order() const;
  /// Checks every invariant; throws Error naming the offending node (and its source
  /// position when known): unknown/dead references, port out of range, cycles,
  /// duplicate ids, edge list out of sync with the input lists.
  void validate() const;
  /// The naming part of validate(), for readers that check structure themselves: no
  /// attribute has an empty name, and a named output is not another node's id, not the node's own id on an output other than the
  /// first, and not named twice. Text formats refer to values by these names, so a graph
  /// breaking this could not be read back. (Names of the form `id:k` for another node's id,
  /// which TensorFlow-converted ONNX models use, are allowed here; the text readers refuse them.)
  void validate_value_names() const;
  /// Renumbers nodes densely (dropping holes left by removals), keeping order.
  void compact();

  /// Graph-level properties io keeps for round trips (ONNX opsets, metadata, ...).
  Attributes& properties() { return properties_; }
  const Attributes& properties() const { return properties_; }
  /// The file the graph was read from, for error messages.
  std::string source_file;

  /// The underlying storage, for engine code that needs it (engine/graph/storage.h).
  const GraphStorage& storage() const { return *store_; }

 private:
  // The entry points that exist only for speed (loaders, the rewriter's parallel apply
  // phase), reached through GraphTuning (engine/graph/graph_tuning.h), which documents them.
  friend struct GraphTuning;
  struct Removals {
    std::size_t count = 0;
    std::vector<Attributes> attrs;
  };
  NodeId add_node(std::uint32_t id_hash, std::string id, OpType op, InputList inputs, Attributes attrs,
                  std::uint32_t num_outputs, SourceLoc loc);
  static std::uint32_t id_hash(std::string_view id);
  void begin_bulk();
  void end_bulk();
  void remove_node(NodeId n, Removals& removals);
  void settle_removals(Removals& removals);
  void add_use_(ValueRef from, NodeId to, std::uint32_t slot);
  void remove_use_(NodeId to, std::uint32_t slot);
  void remove_(NodeId n, Removals* into);  // both remove_node()s but the counting
  void flag_output_(NodeId n);  // marks n as having a graph output
  void reflag_io_();            // recomputes every node's graph input / output marks
  Node& mut_(NodeId n);

  std::unique_ptr<GraphStorage> store_;
  std::size_t live_ = 0;
  std::vector<NodeId> inputs_;
  std::vector<ValueRef> outputs_;
  Attributes properties_;
};

/// The constant tensor behind v when v is output 0 of a Const node (attribute "value")
/// or of an ONNX Constant node; null otherwise.
const Tensor* constant_tensor(const Graph& g, ValueRef v);
/// True when v is produced by a Const/Constant node (data or not).
bool is_constant(const Graph& g, ValueRef v);

}  // namespace graphfuse
