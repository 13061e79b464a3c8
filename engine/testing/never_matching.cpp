// Which rules' ops can appear at all: the inputs' ops, then, to a fixed point, the ops
// created by rules whose every pattern node can find its op.
#include "testing/never_matching.h"

#include <set>

#include "match/program.h"
#include "rules/suggest.h"

namespace graphfuse::testing {

namespace {

// The first pattern node (an op set of one CheckOp) none of whose ops is available, or
// null when every pattern node can find one.
const std::vector<OpType>* missing_op(const match::MatchProgram& p, const std::set<OpType>& available) {
  for (const match::Instr& in : p.code) {
    if (in.op != match::Opcode::CheckOp) continue;
    const std::vector<OpType>& ops = p.op_sets[in.aux];
    bool any = false;
    for (OpType op : ops) any = any || available.count(op);
    if (!any) return &ops;
  }
  return nullptr;
}

}  // namespace

std::vector<NeverMatching> never_matching_rules(const RuleSet& rules, const std::vector<Graph>& inputs) {
  std::set<OpType> available;
  for (const Graph& g : inputs)
    for (NodeId n : g.nodes()) available.insert(g.node(n).op);
  for (bool grew = true; grew;) {
    grew = false;
    for (const Rule& r : rules.rules()) {
      if (missing_op(r.compiled->match, available)) continue;
      for (const match::RwNode& n : r.compiled->rewrite.nodes)
        if (n.op_of < 0) grew = available.insert(n.op).second || grew;
    }
  }
  std::vector<std::string> known;
  for (OpType op : available) known.emplace_back(op.name());
  std::vector<NeverMatching> out;
  for (const Rule& r : rules.rules()) {
    if (!r.enabled) continue;
    const std::vector<OpType>* ops = missing_op(r.compiled->match, available);
    if (!ops) continue;
    std::string names;
    for (OpType op : *ops) names += (names.empty() ? "" : "|") + std::string(op.name());
    std::string msg = "rule '" + r.name + "' (" + r.loc.str() + ") can never match these inputs: no input has an op " +
                      names + " and no rule creates one";
    if (ops->size() == 1) msg += rules::did_you_mean(std::string((*ops)[0].name()), known);
    out.push_back({r.label(), r.loc.file, std::move(msg)});
  }
  return out;
}

}  // namespace graphfuse::testing
