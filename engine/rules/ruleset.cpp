// RuleSet: the frozen rule list and its index by root op.
#include "graphfuse/rules.h"

#include <algorithm>

#include "match/program.h"

namespace graphfuse {

std::string Rule::label() const {
  std::string where = loc.file;
  if (loc.line > 0) where.append(":").append(std::to_string(loc.line));
  return where.empty() ? name : where.append(" ").append(name);
}

RuleSet::RuleSet() = default;
RuleSet::~RuleSet() = default;
RuleSet::RuleSet(RuleSet&&) noexcept = default;
RuleSet& RuleSet::operator=(RuleSet&&) noexcept = default;
RuleSet::RuleSet(const RuleSet&) = default;
RuleSet& RuleSet::operator=(const RuleSet&) = default;

const Rule* RuleSet::find(std::string_view name) const {
  for (const Rule& r : rules_)
    if (r.name == name) return &r;
  return nullptr;
}

std::span<const std::uint32_t> RuleSet::rules_for(OpType op) const {
  if (op.index() < by_op_.size() && !by_op_[op.index()].empty()) return by_op_[op.index()];
  return wildcard_;
}

void RuleSet::freeze_() {
  enabled_.clear();
  wildcard_.clear();
  by_op_.clear();
  max_depth_ = 0;
  for (std::uint32_t i = 0; i < rules_.size(); ++i) {
    const Rule& r = rules_[i];
    if (r.enabled) enabled_.push_back(i);
    max_depth_ = std::max(max_depth_, r.depth);
    if (r.root_ops.empty()) wildcard_.push_back(i);
    for (OpType op : r.root_ops) {
      if (op.index() >= by_op_.size()) by_op_.resize(op.index() + 1);
      by_op_[op.index()].push_back(i);
    }
  }
  // Wildcard-root rules apply under every op: merge them into each list in rule order,
  // so rules_for() is one lookup and candidates try rules in rule order.
  if (!wildcard_.empty()) {
    for (auto& list : by_op_) {
      if (list.empty()) continue;
      list.insert(list.end(), wildcard_.begin(), wildcard_.end());
      std::sort(list.begin(), list.end());
    }
  }
}

}  // namespace graphfuse
