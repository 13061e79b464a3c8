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
#include "rewrite/rewrite_listener.h"

namespace graphfuse::rewrite {

/// Mutates a Graph and tells its listener of every change as it happens. Rewrites never
/// touch the Graph directly.
/// Nodes it creates, and roots taken over whose outputs have no type, get their output
/// types from the graph format's type inference (graphfuse/type_inference.h), when the
/// format has one, so rules can read shapes of values the input file never had.
class Rewriter {
 public:
  explicit Rewriter(Graph& g, RewriteListener* listener = nullptr)
      : g_(g), types_(type_inference_for(g)), listener_(listener ? listener : &ignore_) {}

  Rewriter(const Rewriter&) = delete;  // the listener may be its own ignore_
  Rewriter& operator=(const Rewriter&) = delete;

  /// Who hears of the mutations from now on (null: nobody).
  void set_listener(RewriteListener* listener) { listener_ = listener ? listener : &ignore_; }

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
  RewriteListener ignore_;       // the listener when nobody listens: every method empty
  RewriteListener* listener_;
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
