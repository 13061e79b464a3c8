// Constant folding with the reference kernels, seeded constant data, and rewriting that folds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::kernels {

/// Which nodes fold_constants may evaluate.
enum class FoldScope {
  Off,         ///< none
  RuleCreated, ///< only nodes a rewrite created (they carry `_rule`): a rule's constant
               ///< arithmetic (Conv + BatchNormalization) folds, the model's own stays
  All,         ///< every node whose inputs are all constants with data
};

/// "off" / "auto" (RuleCreated) / "all"; throws Error listing the valid names.
FoldScope fold_scope_from_name(std::string_view name);

struct FoldOptions {
  FoldScope scope = FoldScope::All;
  /// Results larger than this many elements are left unfolded (a Tile or Expand of a
  /// constant would otherwise bloat the model).
  std::int64_t max_elements = std::int64_t{1} << 26;
};

/// What fold_constants did.
struct FoldReport {
  struct Folded {
    std::string node;  ///< the folded node's id (now a Const)
    std::string op;    ///< the op it was
  };
  std::vector<Folded> folded;        ///< in topological order
  std::vector<std::string> removed;  ///< constants left without users and removed
  /// Nodes with all-constant inputs that were not folded, with why ("no kernel for op
  /// 'X'", a kernel error, "result too large"): evaluation failed, the graph is unchanged.
  std::vector<std::string> skipped;
  bool changed() const { return !folded.empty() || !removed.empty(); }
};

/// Evaluates, in topological order, every single-output node in scope whose inputs are
/// all constants with data (absent optional inputs allowed) with the reference kernels.
/// The node becomes a Const in place: same NodeId, id and output name, so consumers and
/// graph outputs are untouched and the result is deterministic; attribute `value` holds
/// the result (and `_rule` is kept for provenance). Constants that fed folded nodes and
/// are left without users are removed unless they are graph outputs.
FoldReport fold_constants(Graph& g, const FoldOptions& options = {});

/// Gives every Const without data the seeded random data the executor would give it
/// (ExecOptions::seed, by node id, shape and use), stored as its `value` attribute, so
/// that folding can evaluate it and a rewritten copy keeps exactly these numbers.
/// Returns the number of constants filled. Throws Error for a data-less constant with
/// no shape.
std::size_t materialize_constants(Graph& g, std::uint64_t seed);

/// Rewrites `g` to a fixed point, folds constants in `fold.scope`, and repeats while
/// folding changed something (so rules that need constant operands, like a Clip fused
/// into a convolution whose weights a batch-norm fold rebuilt, fire), at most
/// `max_passes` times. The report sums all driver runs (rounds, per-rule counts, trace);
/// `fold_out`, when given, receives every fold pass's work.
RewriteReport rewrite_and_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                               const FoldOptions& fold, FoldReport* fold_out = nullptr,
                               int max_passes = 8);

/// Verification of a rewrite whose graphs may lack constant data: gives `before`'s
/// data-less constants their seeded data, gives `after`'s constants that kept an id
/// (and shape) of `before` the very same tensors (the executor would choose a random
/// scale from a constant's consumers, which a rewrite changes), then runs both on the
/// same seeded inputs (verify_rewrite).
std::vector<TensorDiff> verify_graphs(const Graph& before, const Graph& after, const ExecOptions& options,
                                      double rtol = 1e-4, double atol = 1e-5);

/// One line per output: "name: max_abs 1.2e-07, max_rel 3.4e-06, max_abs/max|ref| 5.6e-08 PASS".
std::string format_diffs(const std::vector<TensorDiff>& diffs);

}  // namespace graphfuse::kernels
