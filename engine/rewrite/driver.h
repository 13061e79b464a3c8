// The fixed-point driver's internal entry point, with hooks that let explain watch
// what happens to one candidate.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "graphfuse/rewrite.h"
#include "match/vm.h"

namespace graphfuse::rewrite {

/// What happened to one legal match while a round applied its matches in order.
struct CandidateEvent {
  /// Declined: the RewriteGate said no (gate_detail says why).
  enum class Outcome { Applied, Conflict, Stale, Declined };
  int round = 0;
  std::uint32_t rule = 0;
  NodeId root = kNoNode;
  const match::Embedding* emb = nullptr;
  Outcome outcome = Outcome::Applied;
  /// Conflict: the node it shared with a match applied earlier in the round, and that
  /// match's rule and root.
  NodeId shared = kNoNode;
  std::uint32_t winner_rule = 0;
  NodeId winner_root = kNoNode;
  /// With a RewriteGate: its GateVerdict::detail for this match.
  std::string_view gate_detail{};
};

struct DriverHooks {
  /// Called for every legal match, in application order, before it is applied.
  std::function<void(const CandidateEvent&)> on_candidate;
};

/// rewrite_graph with optional hooks (null: none, and no bookkeeping for them).
RewriteReport run_driver(Graph& g, const RuleSet& rules, const RewriteOptions& opt,
                         const DriverHooks* hooks);

}  // namespace graphfuse::rewrite
