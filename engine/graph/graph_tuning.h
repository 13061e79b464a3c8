// Internal: the Graph entry points that exist only for speed, for the engine's loaders and
// the rewriter's parallel apply phase. A library user never needs them (graphfuse/graph.h
// shows what a user needs); they are Graph's private members, reached through here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

struct GraphTuning {
  /// The hash the id index files `id` under.
  static std::uint32_t id_hash(std::string_view id) { return Graph::id_hash(id); }

  /// add_node for loaders that hashed the id already (for their own tables): `id_hash` is
  /// id_hash(id). One hash a node instead of two.
  static NodeId add_node(Graph& g, std::uint32_t id_hash, std::string id, OpType op, InputList inputs,
                         Attributes attrs, std::uint32_t num_outputs, SourceLoc loc) {
    return g.add_node(id_hash, std::move(id), op, std::move(inputs), std::move(attrs), num_outputs, std::move(loc));
  }

  /// For loaders of big files: from begin_bulk() to end_bulk(), add_node leaves ids out
  /// of the id index (checking and filing an id is a random memory access, and for a
  /// graph of millions of nodes those cache misses are most of the load); end_bulk() files
  /// them all in one ordered pass and throws Error on a duplicate id. find(), rename()
  /// and remove_node() end a bulk load first.
  static void begin_bulk(Graph& g) { g.begin_bulk(); }
  static void end_bulk(Graph& g) { g.end_bulk(); }

  /// What remove_node(g, n, removals) leaves to its caller: how many nodes it removed, and
  /// those of their attribute sets that are not canonical, dropped when settle_removals()
  /// runs.
  using Removals = Graph::Removals;

  /// remove_node for threads that remove different nodes side by side (the rewriter's
  /// parallel apply phase): the removal is counted in `removals`, not in size(), so the
  /// threads share no counter. The node's attribute set is not dropped either: a set all
  /// the threads' nodes share (a Conv2D's strides and padding) has one reference count,
  /// and every thread dropping references to it makes its cache line travel between them.
  /// A canonical set (Attributes::canonical(): small, and as a rule held by the graph's
  /// interner anyway) stays in the dead record until the graph goes (or compact()); any
  /// other set is handed over to `removals`. settle_removals() then takes the count off
  /// size() and drops the handed-over sets. An input list too long to be held in the
  /// record (more than InputList::kInline inputs) keeps its heap block in the dead record
  /// until the graph goes (or compact()): freeing it, a thread other than the one that
  /// loaded the graph would put it on the loading thread's heap lists, which that thread
  /// uses at the same time.
  static void remove_node(Graph& g, NodeId n, Removals& removals) { g.remove_node(n, removals); }
  static void settle_removals(Graph& g, Removals& removals) { g.settle_removals(removals); }
};

}  // namespace graphfuse
