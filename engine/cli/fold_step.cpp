// The rewriter-kernels glue behind apply --fold, verify, run and verified rule tests.
#include "cli/fold_step.h"

#include "graphfuse/error.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/fold.h"
#endif

namespace graphfuse::cli {

RewriteReport rewrite_with_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                                const std::string& fold_mode, FoldSummary* summary) {
#ifdef GRAPHFUSE_HAVE_KERNELS
  kernels::FoldOptions fold;
  fold.scope = kernels::fold_scope_from_name(fold_mode);
  if (fold.scope == kernels::FoldScope::Off) return rewrite_graph(g, rules, options);
  kernels::FoldReport report;
  RewriteReport r = kernels::rewrite_and_fold(g, rules, options, fold, &report);
  if (summary) {
    summary->folded += report.folded.size();
    summary->removed += report.removed.size();
    summary->skipped.insert(summary->skipped.end(), report.skipped.begin(), report.skipped.end());
  }
  return r;
#else
  if (fold_mode != "off" && fold_mode != "auto")
    throw Error("constant folding needs the kernels; this graphfuse was built without them");
  (void)summary;
  return rewrite_graph(g, rules, options);
#endif
}

std::string rules_applied(const RewriteReport& report) {
  std::string out;
  for (const RuleStats& s : report.rules)
    if (s.applied) out += (out.empty() ? "" : ", ") + s.rule + " " + std::to_string(s.applied);
  return out.empty() ? "none" : out;
}

std::function<std::string(const Graph&, const Graph&)> rule_test_verifier() {
#ifdef GRAPHFUSE_HAVE_KERNELS
  return [](const Graph& before, const Graph& after) -> std::string {
    kernels::ExecOptions opt;
    opt.threads = 1;  // rule-test graphs are tiny; threads would only add start-up time
    try {
      auto diffs = kernels::verify_graphs(before, after, opt);
      bool pass = true;
      for (const auto& d : diffs) pass = pass && d.pass;
      return pass ? std::string() : "numerics differ (reference kernels, seed 0, rtol 1e-4, atol 1e-5):\n" +
                                        kernels::format_diffs(diffs);
    } catch (const Error& e) {
      return "could not run the graphs: " + e.pretty();
    }
  };
#else
  return {};
#endif
}

}  // namespace graphfuse::cli
