// CLI glue between the rewriter and the kernels: rewriting with constant folding, rule-test verification.
#pragma once

#include <functional>
#include <string>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

/// What the folding passes did, for the commands' summaries.
struct FoldSummary {
  std::size_t folded = 0;   ///< nodes evaluated into constants
  std::size_t removed = 0;  ///< constants removed for lack of users
  std::vector<std::string> skipped;  ///< "node: why" for nodes that could not be folded
};

/// The engine does not depend on the kernels (the kernels link the engine), so the
/// commands rewrite through this hook: rewrite_graph when `fold_mode` is "off" (or when
/// built without kernels), else the kernels' rewrite_and_fold with that scope ("auto":
/// nodes the rules created; "all": every node with constant inputs). Throws Error for an
/// unknown mode.
RewriteReport rewrite_with_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                                const std::string& fold_mode, FoldSummary* summary = nullptr);

/// "onnx_conv_clip 35, conv_bn_fold 52" for the rules that applied; "none" when none did.
std::string rules_applied(const RewriteReport& report);

/// The verifier for `graphfuse test` cases with `verify: true` (kernels' verify_graphs with
/// the reference kernels, seed 0, rtol 1e-4, atol 1e-5); empty when built without kernels.
std::function<std::string(const Graph& before, const Graph& after)> rule_test_verifier();

}  // namespace graphfuse::cli
