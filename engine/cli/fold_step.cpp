// The rewriter-kernels glue behind apply --fold, verify, run and verified rule tests.
#include "cli/fold_step.h"

#include "graphfuse/error.h"
#include "graphfuse/folding.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/fold.h"
#endif

namespace graphfuse::cli {

RewriteReport rewrite_with_fold(Graph& g, const RuleSet& rules, const RewriteOptions& options,
                                const std::string& fold_mode) {
#ifdef GRAPHFUSE_HAVE_KERNELS
  std::unique_ptr<Folder> folder = kernels::make_folder(fold_mode);
  return rewrite_and_fold(g, rules, options, folder.get());
#else
  if (fold_mode != "off" && fold_mode != "auto")
    throw Error("constant folding needs the kernels; this graphfuse was built without them");
  return rewrite_graph(g, rules, options);
#endif
}

std::string rules_applied(const RewriteReport& report) {
  std::string out;
  for (const RuleStats& s : report.rules)
    if (s.applied) out += (out.empty() ? "" : ", ") + s.rule + " " + std::to_string(s.applied);
  return out.empty() ? "none" : out;
}

#ifdef GRAPHFUSE_HAVE_KERNELS
namespace {
// The graph inputs verify ran at a guessed shape (no type written), where they were
// written: a wrong guess is the usual reason a verified case cannot run.
std::string guessed_shapes(const Graph& g, const kernels::ExecOptions& opt) {
  std::string out;
  const auto shapes = kernels::input_shapes(g, opt);
  for (std::size_t i = 0; i < g.inputs().size() && i < shapes.size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    if (n.outputs.at(0).type.shape_known) continue;
    std::string dims;
    for (std::int64_t d : shapes[i]) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    out += "  " + (n.loc.known() ? n.loc.str() + ": " : std::string()) + "input '" + n.id +
           "' has no type; verify guessed the shape [" + dims + "] from its first consumer (write `input " + n.id +
           ": float32[...]` to give it one)\n";
  }
  return out;
}
}  // namespace
#endif

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
                                        kernels::format_diffs(diffs) + guessed_shapes(before, opt);
    } catch (const Error& e) {
      return "could not run the graphs: " + e.pretty() + "\n" + guessed_shapes(before, opt);
    }
  };
#else
  return {};
#endif
}

}  // namespace graphfuse::cli
