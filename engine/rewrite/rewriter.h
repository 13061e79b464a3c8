// The Rewriter: the one object through which rewriting mutates a Graph, recording changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/graph_tuning.h"
#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/type_inference.h"
#include "match/vm.h"
#include "rewrite/attr_cache.h"

namespace graphfuse::rewrite {

/// What happened to a node. The driver turns these into staleness checks within a
/// round and into the worklist of the next round.
enum class ChangeKind : std::uint8_t {
  Created,        ///< a new node
  Replaced,       ///< op, inputs and attributes replaced in place (root takeover)
  InputsChanged,  ///< one or more input slots rewired
  Removed,        ///< the node is gone
  UsesChanged,    ///< the node gained or lost consumers
  OutputMoved,    ///< a graph output moved onto one of the node's outputs (take_output_name)
};

struct Change {
  ChangeKind kind;
  NodeId node;
  /// Replaced only: the node was a constant (Const / Constant) before or is one after.
  /// The facts a match reads off a leaf's producer beyond its output types (const(x),
  /// value(x), values(x), a constant's tensor shape, pattern literals) are the facts of a
  /// constant; the driver marks matches reading such a node as a leaf stale.
  bool constant = false;
};

/// Mutates a Graph and logs every change. Rewrites never touch the Graph directly.
/// Nodes it creates, and roots taken over whose outputs have no type, get their output
/// types from the graph format's type inference (graphfuse/type_inference.h), when the
/// format has one, so rules can read shapes of values the input file never had.
class Rewriter {
 public:
  explicit Rewriter(Graph& g) : g_(g), types_(type_inference_for(g)) {}

  const Graph& graph() const { return g_; }
  /// True when the graph's format infers the types of the values rewrites make.
  bool infers_types() const { return types_ != nullptr; }
  /// Adds a node with `num_outputs` outputs (id must be free; see unique_id).
  NodeId create(std::string id, OpType op, InputList inputs, Attributes attrs,
                std::uint32_t num_outputs = 1);
  /// Gives node n a new op, inputs and attributes, keeping its NodeId, id and outputs,
  /// so its consumers and graph outputs stay valid.
  void replace_in_place(NodeId n, OpType op, InputList inputs, Attributes attrs);
  /// Rewires every use of `from` (consumers and graph outputs) to `to`.
  void replace_all_uses(ValueRef from, ValueRef to);
  /// Removes a node that has no uses and is not a graph output.
  void erase(NodeId n);
  /// From now on erase() hands its removals to `*removals` (Graph::remove_node(n,
  /// removals)): for a Rewriter that erases side by side with others; null: as
  /// Graph::remove_node(n).
  void collect_removals_in(GraphTuning::Removals* removals) { removals_ = removals; }
  /// Gives value v the name of a graph output moved onto it (and its type where v has
  /// none), so the output keeps its name (see rewrite::output_takeover).
  void take_output_name(ValueRef v, OutputInfo from);
  /// `base` if no node has that id, else `base_2`, `base_3`, ... (deterministic).
  std::string unique_id(const std::string& base) const;

  const std::vector<Change>& changes() const { return changes_; }
  void clear_changes() { changes_.clear(); }

  /// apply_rewrite's working vectors, kept between rewrites: a round applies 10^5 of
  /// them, and a dozen small allocations each showed up as a tenth of the apply phase.
  struct Scratch {
    std::vector<Attributes> attrs;
    std::vector<OpType> ops;
    std::vector<NodeId> elements, consts, created;
    std::vector<char> taken, is_root;
    std::vector<std::pair<ValueRef, OutputInfo>> moved;
    std::vector<TemplateAttrCache::Key> keys;
    std::vector<TemplateAttrCache::Sources> sources;
    std::vector<char> keyed;  // per template node: a miss, keys[i] and sources[i] to remember
  };
  Scratch& scratch() { return scratch_; }
  TemplateAttrCache& attr_cache() { return attr_cache_; }

 private:
  void uses_changed(std::span<const ValueRef> values);

  Graph& g_;
  std::shared_ptr<const TypeInference> types_;  // null: the format infers nothing
  std::vector<Change> changes_;
  GraphTuning::Removals* removals_ = nullptr;
  static constexpr std::size_t kRemovalBatch = 4096;
  Scratch scratch_;
  TemplateAttrCache attr_cache_;
};

/// Applies rule `rule`'s rewrite to embedding `e` (already checked legal): creates the
/// template's nodes in order, a node that replaces a root taking it over in place (see
/// match::RwNode::takeover); rewires the uses of roots nobody took over to their
/// replacements; then removes matched nodes, and constants whose values the rule folded
/// in (RewriteProgram::folded), left without uses. Created and taken-over nodes get
/// attribute `_rule` = the rule's name. Writes one
/// line to `trace` when it is not null.
void apply_rewrite(Rewriter& rw, const Rule& rule, const match::Embedding& e, std::string* trace);

/// What apply_rewrite would create for `e`, without mutating anything (ops, attributes
/// and inputs of the template's nodes; empty for erase-style rewrites): what a
/// RewriteGate judges, into `out` (its vectors reused: the gate plans every legal match of a
/// round). Read-only, safe to call from several threads.
void plan_rewrite(const Graph& g, const Rule& rule, const match::Embedding& e, std::vector<PlannedNode>& out);

}  // namespace graphfuse::rewrite
