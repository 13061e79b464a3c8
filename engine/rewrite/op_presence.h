// Which ops the graph has, and so which rules can match at all this round.
#pragma once

#include <span>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rules.h"

namespace graphfuse::rewrite {

/// Every node a pattern names checks its op against a set (`Transpose`, `Relu|Sigmoid`);
/// a rule one of whose sets holds no op the graph has cannot match anywhere, so the driver
/// leaves it out of matching (it costs a candidate per root otherwise: rules/tf/layout.yaml's
/// Transpose rules on a graph without Transposes). Presence only grows: an op is marked
/// when a node has it at the start or gets it from a rewrite, and never unmarked, so a rule
/// is skipped only when it provably cannot match. A rule that becomes runnable needs no
/// full pass: any match contains a node with the newly present op, which the rewrite that
/// made it touched, so the worklist reaches the match's root.
class OpPresence {
 public:
  OpPresence(const Graph& g, const RuleSet& rules, const std::vector<char>& active, std::span<const NodeId> nodes);

  /// A node now has `op` (created, or replaced in place).
  void saw(OpType op) {
    if (op.index() >= present_.size()) present_.resize(op.index() + 1, 0);
    if (!present_[op.index()]) {
      present_[op.index()] = 1;
      stale_ = true;
    }
  }

  /// Per rule: active, and every op set it checks has a present op.
  const std::vector<char>& runnable();

 private:
  bool has_any(const std::vector<OpType>& set) const;

  const RuleSet& rules_;
  const std::vector<char>& active_;
  std::vector<char> present_;  ///< by OpType::index()
  std::vector<std::vector<const std::vector<OpType>*>> needs_;  ///< per rule: the op sets it checks
  std::vector<char> runnable_;
  bool stale_ = true;
};

}  // namespace graphfuse::rewrite
