// The fixed-point rewriter: match all rules, select without overlap, apply, repeat.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/error.h"
#include "graphfuse/graph.h"
#include "graphfuse/rules.h"

namespace graphfuse {

/// Where a running rewrite is, for progress displays (RewriteOptions::progress).
struct RewriteProgress {
  enum class Phase { Match, Apply };
  int round = 0;
  Phase phase = Phase::Match;
  std::size_t done = 0;   ///< matches applied or skipped so far (Apply); 0 (Match)
  /// Match: the nodes the round visits as roots (all of them in round 1, those near a change
  /// later); Apply: the legal matches to go through.
  std::size_t total = 0;
  std::size_t nodes = 0;  ///< live nodes now
  /// Apply: this round's (rule, root) candidates, the count --stats reports; 0 in Match.
  std::size_t candidates = 0;
};

/// PlannedNode::inputs: an absent optional input.
inline constexpr std::uint32_t kAbsentInput = 0xffffffffu;

/// One node a candidate rewrite would create, computed before anything is mutated.
struct PlannedNode {
  OpType op;
  Attributes attrs;  ///< as the node would get them, less the `_rule` provenance attribute
  /// Its inputs. Not a graph value (invalid): ValueRef{kNoNode, k} is the output of
  /// planned node k, ValueRef{kNoNode, kAbsentInput} an absent optional input.
  std::vector<ValueRef> inputs;
  NodeId takes_over = kNoNode;  ///< the root it replaces in place, keeping its outputs
};

/// A legal candidate as a RewriteGate sees it: the rule, the matched nodes (roots
/// first; kNoNode for unbound optional pattern nodes) and what the rewrite would create.
struct GateCandidate {
  const Rule& rule;
  std::span<const NodeId> matched;
  std::span<const NodeId> roots;
  std::span<const PlannedNode> planned;
};

/// A gate's answer for one candidate.
struct GateVerdict {
  bool apply = true;
  /// Larger is better: among overlapping candidates the larger saving is applied first
  /// (ties fall back to benefit, rule order, position).
  double saving = 0;
  /// Declined: the key the statistics count it under ("no_kernel: com.microsoft.FusedConv
  /// with activation Clip on ort-cuda", "no_gain"). Applied: may stay empty.
  std::string summary;
  /// The sentence explain prints ("saves 0.41 ms (1.92 -> 1.51 ms)").
  std::string detail;
};

/// Decides whether a legal candidate is applied, and how much it is worth (a target's
/// kernel list and cost model; engine/cost). The driver asks it once per legal match, on
/// the graph as it was when the round began, from several threads at once: decide must
/// only read `g` and be a pure function of its arguments (results stay deterministic).
class RewriteGate {
 public:
  virtual ~RewriteGate() = default;
  virtual GateVerdict decide(const Graph& g, const GateCandidate& c) const = 0;
  /// Called on the graph before the rules run (once per rewrite_graph, once per
  /// rewrite_and_fold, on explain's copy), so it must be idempotent: adjusts the graph-level
  /// facts the rules read as the target asks (a profile's `raise_onnx_opset`). Returns a line
  /// for RewriteReport::notes, "" when it did nothing.
  virtual std::string prepare(Graph& g) const {
    (void)g;
    return {};
  }
};

/// Driver configuration (one struct, like MLIR's GreedyRewriteConfig).
struct RewriteOptions {
  /// Rounds that may apply rewrites; one more round may only confirm the fixed point.
  int max_rounds = 100;
  /// Stop ("unbounded growth") as soon as the graph has more live nodes than this;
  /// 0 = 8 x the input's node count + 4096.
  std::size_t max_nodes = 0;
  /// Matching threads; 0 = all cores. The result is byte-identical for any value. More
  /// than the process may use by default runs that many (oversubscribed), unless the
  /// application holds a lower tbb::global_control limit.
  int threads = 0;
  /// With more than one thread, a round with at least this many matches, all of them
  /// plain fusions (one root taken over by one new op), is applied in groups of matches
  /// that touch nothing in common, side by side; the decisions and the graph are the
  /// ones applying in order gives (docs/rewriter.md). Set it to SIZE_MAX to always apply
  /// in order, to 0 to group every round that can be grouped.
  std::size_t parallel_apply_from = 4096;
  /// Record one line per applied rewrite in RewriteReport::trace.
  bool trace = false;
  /// After the first round, match only near what changed (a worklist). Gives the same
  /// graph as matching everything every round; off is the reference behaviour.
  bool incremental = true;
  /// Visit each round's candidates in an order shuffled with this seed. The result does
  /// not depend on it (matches are ordered before they are applied); tests use it to
  /// prove that.
  std::optional<std::uint64_t> shuffle_seed;
  /// Measure time per rule (RuleStats::match_ms, apply_ms). Matching then runs one pass
  /// per rule over that rule's candidates; results and counts are the same.
  bool rule_times = false;
  /// Throw Error when the driver stops without a fixed point (max_rounds, oscillation,
  /// growth); when false, return the report with converged = false instead.
  bool throw_on_nonconvergence = true;
  /// When not empty, only these rules run (disabled ones too, so a rule can be tested
  /// before it is switched on). An unknown name is an Error.
  std::vector<std::string> only_rules;
  /// Called on the calling thread when a phase starts and every few thousand matches
  /// while applying. Must be cheap; must not touch the graph.
  std::function<void(const RewriteProgress&)> progress;
  /// When set, every legal match is put to it before it is applied (a target profile and
  /// cost model, --target); null: every legal match is applied, as without a target.
  std::shared_ptr<const RewriteGate> gate;
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
  Cycle,             ///< replacing several roots would create a cycle (a non-convex match)
};
inline constexpr std::size_t kRejectReasons = 8;
/// "external_use", "graph_output", "leaf_overlap", "missing_attribute", "erased_output",
/// "conflict", "stale", "cycle".
std::string_view reject_reason_name(RejectReason r);

/// Per-rule counts, summed over all rounds.
struct RuleStats {
  std::string rule;
  SourceLoc loc;
  std::size_t candidates = 0;  ///< (rule, root node) pairs tried
  std::size_t matched = 0;     ///< candidates with at least one structural embedding
  std::size_t applied = 0;     ///< rewrites applied
  std::array<std::size_t, kRejectReasons> rejected{};  ///< indexed by RejectReason
  double match_ms = 0.0;  ///< wall time matching this rule (only with RewriteOptions::rule_times)
  double apply_ms = 0.0;  ///< time applying its rewrites (only with RewriteOptions::rule_times)
  /// With a gate: legal matches it declined, by GateVerdict::summary (sorted), and the
  /// summed GateVerdict::saving of the rewrites applied.
  std::vector<std::pair<std::string, std::size_t>> declined{};
  double saving = 0.0;

  std::size_t rejected_by(RejectReason r) const { return rejected[static_cast<int>(r)]; }
};

/// Per-round counts (all rules together).
struct RoundStats {
  std::size_t candidates = 0;  ///< (rule, root node) pairs tried this round
  std::size_t matched = 0;
  std::size_t applied = 0;
  std::size_t nodes = 0;  ///< live nodes when the round ended
  double match_ms = 0.0;  ///< wall time of the (parallel) matching pass
  double apply_ms = 0.0;  ///< wall time of ordering, selecting and applying
  /// The parts of apply_ms spent putting the round's matches in order and, when they were
  /// applied side by side, grouping them (0 when applied one after another); the rest of
  /// apply_ms is the applying itself. A round applied side by side is not put in order as
  /// a whole: its groups are, each on its own, within group_ms (its order_ms is about 0).
  double order_ms = 0.0;
  double group_ms = 0.0;
  /// Groups the round's matches were applied in, side by side on the driver's threads
  /// (RewriteOptions::parallel_apply_from); 0 when they were applied one after another.
  std::size_t apply_groups = 0;
};

/// How the driver stopped.
enum class StopKind {
  FixedPoint,   ///< a round found nothing to apply
  MaxRounds,    ///< max_rounds rounds applied rewrites and one more would too
  Oscillation,  ///< the graph came back to a state it had after an earlier round
  Growth,       ///< the graph outgrew max_nodes
};
/// "fixed_point", "max_rounds", "oscillation", "growth".
std::string_view stop_kind_name(StopKind k);

/// What rewrite_graph did.
/// What constant folding did between rewrite passes (rewrite_and_fold, graphfuse/folding.h).
struct FoldReport {
  struct Folded {
    std::string node;  ///< the folded node's id (now a constant)
    std::string op;    ///< the op it was
  };
  std::vector<Folded> folded;        ///< in the order folded (topological per pass)
  std::vector<std::string> removed;  ///< constants left without users and removed
  /// Nodes with all-constant inputs that were not folded, with why ("no kernel for op
  /// 'X'", a kernel error, "result too large"): evaluation failed, the graph is unchanged.
  std::vector<std::string> skipped;
  bool changed() const { return !folded.empty() || !removed.empty(); }
  /// Appends another pass's work.
  void merge(const FoldReport& next);
};

struct RewriteReport {
  std::vector<RuleStats> rules;   ///< the rules that ran, in rule order
  int rounds = 0;                 ///< rounds that applied at least one rewrite
  bool converged = false;         ///< a round found nothing to apply
  std::size_t nodes_before = 0;
  std::size_t nodes_after = 0;
  int threads = 1;                    ///< matching threads used
  std::vector<RoundStats> per_round;  ///< every matching round, the final empty one included
  std::vector<std::string> trace;     ///< one line per rewrite when RewriteOptions::trace
  StopKind stop = StopKind::FixedPoint;
  std::string stop_reason;            ///< "fixed point" or why it stopped
  std::vector<std::string> firing;    ///< when not converged: labels of the rules still firing
  bool gated = false;                 ///< a RewriteGate decided (RuleStats::declined, saving)
  FoldReport fold;                    ///< constant folding between passes (rewrite_and_fold)
  /// Ids of the nodes rewrite_and_fold removed after the fixed point because the rewrite
  /// left them without a reader (graphfuse/dead_nodes.h), in removal order.
  std::vector<std::string> dead;
  /// Rule-created nodes rewrite_and_fold merged into an identical earlier one after the
  /// fixed point (graphfuse/merge_copies.h); they are among `dead`.
  std::size_t merged = 0;
  /// What the gate did to the graph before rewriting (RewriteGate::prepare), one line each.
  std::vector<std::string> notes;

  /// Adds the report of a later driver run over the same rules (rewrite_and_fold's passes):
  /// per-rule counts, declines and savings, times, rounds, round and trace lists are summed
  /// or appended; the stop, convergence and node count are the later run's.
  void merge(const RewriteReport& next);
};

/// Rewrites `g` with the enabled rules of `rules` until no rule applies.
///
/// Each round matches every candidate (in parallel, read-only), orders the legal matches
/// by (benefit desc, rule order, root's topological position), and applies them greedily,
/// skipping any that overlap a match already applied in the round. Legality follows
/// the rules of docs/rules.md: interior nodes have no use outside the match and are not graph outputs;
/// the root may have any consumers; the final replacement node takes over the root's
/// NodeId, id and outputs. Created nodes carry attribute `_rule` = the rule's name.
///
/// The topological position is the NodeId when every node's inputs have smaller ids
/// (graphs read from files written in order, generated graphs), else the position in
/// Graph::topological_order(); either way a function of the input alone.
///
/// Stops without a fixed point when max_rounds is exhausted, when the graph returns to
/// the state it had after an earlier round (oscillation, checked from round 4 on), or
/// when it outgrows max_nodes; it then throws Error naming the rules that kept firing
/// (unless throw_on_nonconvergence is false). `g` is then valid but partly rewritten,
/// so callers that must not see partial results rewrite a copy or discard it.
RewriteReport rewrite_graph(Graph& g, const RuleSet& rules, const RewriteOptions& opt = {});

/// The report as aligned text: one row per rule (candidates, matched, applied, rejected
/// by reason, time), one row per round, and the stop reason. See docs/rewriter.md.
std::string format_stats(const RewriteReport& report);
/// The same as a JSON document (schema in docs/rewriter.md).
std::string stats_json(const RewriteReport& report);

/// Why rule `rule` does or does not rewrite the node with id `node` of `g` (or, when no node
/// has that id, the node producing the value of that name: ONNX names them apart): the first
/// pattern step or constraint that fails, the legality reason, the match it lost a
/// conflict to, or the round in which it fires. Runs the driver on a copy of `g` with
/// `opt` (only `threads`, `max_rounds`, `max_nodes` and `only_rules` matter). Throws
/// Error for an unknown rule or node. The text is several lines, the last one
/// "verdict: ...".
std::string explain_candidate(const Graph& g, const RuleSet& rules, std::string_view rule,
                              std::string_view node, const RewriteOptions& opt = {});

}  // namespace graphfuse
