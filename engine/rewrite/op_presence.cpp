// Rules that cannot match because the graph lacks an op they check.
#include "rewrite/op_presence.h"

#include <algorithm>

#include "graph/storage.h"
#include "match/program.h"

namespace graphfuse::rewrite {

OpPresence::OpPresence(const Graph& g, const RuleSet& rules, const std::vector<char>& active,
                       std::span<const NodeId> nodes)
    : rules_(rules), active_(active), needs_(rules.size()) {
  for (NodeId n : nodes)
    if (records::alive(g, n)) saw(records::op(g, n));
  for (std::uint32_t r = 0; r < rules.size(); ++r) {
    if (!active[r]) continue;
    // Every CheckOp lies on every path to `accept` (forks branch over loads only), so each
    // set must be satisfied by some node of any embedding. An each's element ops are not
    // needed: it may have no elements.
    const match::MatchProgram& p = rules[r].compiled->match;
    for (const match::Instr& in : p.code)
      if (in.op == match::Opcode::CheckOp) needs_[r].push_back(&p.op_sets[in.aux]);
  }
}

bool OpPresence::has_any(const std::vector<OpType>& set) const {
  return std::any_of(set.begin(), set.end(), [&](OpType op) {
    return op.index() < present_.size() && present_[op.index()];
  });
}

const std::vector<char>& OpPresence::runnable() {
  if (!stale_) return runnable_;
  runnable_.assign(rules_.size(), 0);
  for (std::uint32_t r = 0; r < rules_.size(); ++r)
    runnable_[r] = active_[r] && std::all_of(needs_[r].begin(), needs_[r].end(),
                                              [&](const std::vector<OpType>* s) { return has_any(*s); });
  stale_ = false;
  return runnable_;
}

}  // namespace graphfuse::rewrite
