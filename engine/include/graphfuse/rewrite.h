// The fixed-point rewriter: match all rules, select without overlap, apply, repeat.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/error.h"
#include "graphfuse/graph.h"
#include "graphfuse/rules.h"

namespace graphfuse {

/// Driver configuration (one struct, like MLIR's GreedyRewriteConfig).
struct RewriteOptions {
  /// Rounds that may apply rewrites; one more round may only confirm the fixed point.
  int max_rounds = 100;
  /// Matching threads; 0 = all cores. The result is byte-identical for any value.
  int threads = 0;
  /// Record one line per applied rewrite in RewriteReport::trace.
  bool trace = false;
  /// After the first round, match only near what changed (a worklist). Gives the same
  /// graph as matching everything every round; off is the reference behaviour.
  bool incremental = true;
  /// Throw Error when max_rounds is exhausted; when false, return the report with
  /// converged = false and stop_reason set instead.
  bool throw_on_nonconvergence = true;
  /// When not empty, only these rules run (disabled ones too, so a rule can be tested
  /// before it is switched on). An unknown name is an Error.
  std::vector<std::string> only_rules;
};

/// Why a structurally matching candidate was not rewritten.
enum class RejectReason : int {
  ExternalUse,       ///< an interior node has a use outside the match
  GraphOutput,       ///< an interior node is a graph output
  LeafOverlap,       ///< a leaf is bound to a value produced inside the match
  MissingAttribute,  ///< the rewrite reads an attribute the matched node lacks
  ErasedOutput,      ///< an erase-style rewrite would rename a graph output
  Conflict,          ///< overlapped a match selected earlier in the same round
  Stale,             ///< a node it reads changed earlier in the same round (retried next round)
};
inline constexpr std::size_t kRejectReasons = 7;
/// "external_use", "graph_output", "leaf_overlap", "missing_attribute", "erased_output",
/// "conflict", "stale".
std::string_view reject_reason_name(RejectReason r);

/// Per-rule counts, summed over all rounds.
struct RuleStats {
  std::string rule;
  SourceLoc loc;
  std::size_t candidates = 0;  ///< (rule, root node) pairs tried
  std::size_t matched = 0;     ///< candidates with at least one structural embedding
  std::size_t applied = 0;     ///< rewrites applied
  std::array<std::size_t, kRejectReasons> rejected{};  ///< indexed by RejectReason

  std::size_t rejected_by(RejectReason r) const { return rejected[static_cast<int>(r)]; }
};

/// Per-round counts (all rules together).
struct RoundStats {
  std::size_t candidates = 0;  ///< (rule, root node) pairs tried this round
  std::size_t matched = 0;
  std::size_t applied = 0;
  double match_ms = 0.0;  ///< wall time of the (parallel) matching pass
  double apply_ms = 0.0;  ///< wall time of ordering, selecting and applying
};

/// What rewrite_graph did.
struct RewriteReport {
  std::vector<RuleStats> rules;   ///< the rules that ran, in rule order
  int rounds = 0;                 ///< rounds that applied at least one rewrite
  bool converged = false;         ///< a round found nothing to apply
  std::size_t nodes_before = 0;
  std::size_t nodes_after = 0;
  std::vector<RoundStats> per_round;  ///< every matching round, the final empty one included
  std::vector<std::string> trace;     ///< one line per rewrite when RewriteOptions::trace
  std::string stop_reason;            ///< "fixed point" or why it stopped
};

/// Rewrites `g` with the enabled rules of `rules` until no rule applies.
///
/// Each round matches every candidate (in parallel, read-only), orders the legal matches
/// by (benefit desc, rule order, root's topological position), and applies them greedily,
/// skipping any that overlap a match already applied in the round. Legality follows
/// DESIGN.md: interior nodes have no use outside the match and are not graph outputs;
/// the root may have any consumers; the final replacement node takes over the root's
/// NodeId, id and outputs. Created nodes carry attribute `_rule` = the rule's name.
///
/// Throws Error naming the rules that kept firing when max_rounds is exhausted (unless
/// throw_on_nonconvergence is false); `g` is then valid but partly rewritten, so callers
/// that must not see partial results rewrite a copy.
RewriteReport rewrite_graph(Graph& g, const RuleSet& rules, const RewriteOptions& opt = {});

}  // namespace graphfuse
