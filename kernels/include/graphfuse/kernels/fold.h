// Constant folding with the reference kernels, seeded constant data, and rewriting that folds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memory>
#include <string_view>

#include "graphfuse/folding.h"
#include "graphfuse/graph.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::kernels {

/// Which nodes fold_constants may evaluate.
enum class FoldScope {
  Off,         ///< none
  RuleCreated, ///< only nodes a rewrite created (they carry `_rule`) and nodes reading a
               ///< constant a rule created or this fold made from one: a rule's constant
               ///< arithmetic (Conv + BatchNormalization) and what reads its result (a
               ///< Gather of a Shape a rule made constant) fold, the model's own stays
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

/// What fold_constants did (the engine's report type, so rewrite_and_fold can merge it).
using FoldReport = graphfuse::FoldReport;

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

/// The engine's Folder (graphfuse/folding.h) over fold_constants: graphfuse::rewrite_and_fold
/// with it rewrites and folds with the reference kernels.
class ReferenceFolder final : public Folder {
 public:
  explicit ReferenceFolder(FoldOptions options = {}) : options_(options) {}
  FoldReport fold(Graph& g) override { return fold_constants(g, options_); }

 private:
  FoldOptions options_;
};

/// The folder for a scope name: null for "off", a ReferenceFolder for "auto" (nodes the
/// rules created) and "all"; throws Error listing the valid names for anything else.
std::unique_ptr<Folder> make_folder(std::string_view scope);

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
