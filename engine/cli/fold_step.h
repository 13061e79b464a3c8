// CLI glue between the rewriter and the kernels: rewriting with constant folding, rule-test verification.
#pragma once

#include <functional>
#include <string>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

namespace graphfuse::cli {

/// The commands' rewrite: the engine's rewrite_and_fold (graphfuse/folding.h) with the
/// kernels' folder for `fold_mode` ("auto": nodes the rules created; "all": every node
/// with constant inputs; "off": none). The folding's work is in the report's `fold`.
/// Built without the kernels, "off" and "auto" rewrite without folding. Throws Error for
/// an unknown mode.
RewriteReport rewrite_with_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                                const std::string& fold_mode);

/// "onnx_conv_clip 35, conv_bn_fold 52" for the rules that applied; "none" when none did.
std::string rules_applied(const RewriteReport& report);

/// The verifier for `graphfuse test` cases with `verify: true` (kernels' verify_graphs with
/// the reference kernels, seed 0, rtol 1e-4, atol 1e-5); empty when built without kernels.
std::function<std::string(const Graph& before, const Graph& after)> rule_test_verifier();

}  // namespace graphfuse::cli
