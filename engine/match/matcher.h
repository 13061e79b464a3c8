// Running every rule's match program over candidate roots, in parallel and read-only.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <tbb/task_arena.h>

#include "graphfuse/graph.h"
#include "graphfuse/rules.h"
#include "match/vm.h"

namespace graphfuse::match {

/// A legal embedding of rule `rule` rooted at `root`. The embedding itself lies in one
/// of the MatchResults' buffers (MatchResults::embedding reads it): a match costs this
/// 24-byte record plus its registers, and no allocation of its own.
struct Found {
  std::uint32_t rule = 0;
  NodeId root = kNoNode;
  std::uint32_t buffer = 0;     ///< index into MatchResults::buffers
  std::uint32_t nodes_at = 0;   ///< first node register in that buffer's `nodes`
  std::uint32_t values_at = 0;  ///< first value register in that buffer's `values`
  std::uint16_t num_nodes = 0, num_values = 0;
};

/// The registers of the embeddings one thread found, back to back. A thread appends to
/// its own buffer only, so matching threads never share a cache line or an allocator.
struct MatchBuffer {
  std::vector<NodeId> nodes;
  std::vector<ValueRef> values;
};

/// One embedding, read in place: node register -> node, value register -> value.
struct EmbeddingView {
  std::span<const NodeId> nodes;
  std::span<const ValueRef> values;
};

/// Counts for one rule over one matching pass.
struct RuleCounts {
  std::size_t candidates = 0;
  std::size_t matched = 0;
  std::array<std::size_t, 8> rejected{};  ///< by verdict code
};

/// Decides whether an embedding may be used: -1 accepts, a code in [0, 8) rejects
/// with that reason. Called concurrently; must only read.
using Acceptor = std::function<int(std::uint32_t rule, const Embedding&)>;

struct MatchResults {
  std::vector<Found> found;          ///< at most one per (rule, root); unordered
  std::vector<RuleCounts> counts;    ///< indexed like RuleSet::rules()
  std::vector<MatchBuffer> buffers;  ///< where the found embeddings live

  EmbeddingView embedding(const Found& f) const {
    const MatchBuffer& b = buffers[f.buffer];
    return {{b.nodes.data() + f.nodes_at, f.num_nodes}, {b.values.data() + f.values_at, f.num_values}};
  }
  /// Copies f's embedding into `out` (for code that takes an Embedding); `out` keeps its
  /// capacity, so a reused one allocates nothing.
  void load(const Found& f, Embedding& out) const {
    EmbeddingView v = embedding(f);
    out.nodes.assign(v.nodes.begin(), v.nodes.end());
    out.values.assign(v.values.begin(), v.values.end());
  }
  /// Moves `other`'s matches and buffers in (counts are the caller's business).
  void append(MatchResults&& other);
};

/// For each candidate root and each active rule indexed under its op, searches the
/// embeddings in program order and keeps the first one `accept` allows. A rejected
/// candidate is counted under the reason of its first embedding. With `arena` the
/// candidates are split over its threads; the result's content does not depend on it.
MatchResults find_matches(const Graph& g, const RuleSet& rules, const std::vector<char>& active,
                          std::span<const NodeId> candidates, const Acceptor& accept,
                          tbb::task_arena* arena);

}  // namespace graphfuse::match
