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

/// A legal embedding of rule `rule` rooted at `root`.
struct Found {
  std::uint32_t rule = 0;
  NodeId root = kNoNode;
  Embedding emb;
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
  std::vector<Found> found;         ///< at most one per (rule, root); unordered
  std::vector<RuleCounts> counts;   ///< indexed like RuleSet::rules()
};

/// For each candidate root and each active rule indexed under its op, searches the
/// embeddings in program order and keeps the first one `accept` allows. A rejected
/// candidate is counted under the reason of its first embedding. With `arena` the
/// candidates are split over its threads; the result's content does not depend on it.
MatchResults find_matches(const Graph& g, const RuleSet& rules, const std::vector<char>& active,
                          std::span<const NodeId> candidates, const Acceptor& accept,
                          tbb::task_arena* arena);

}  // namespace graphfuse::match
