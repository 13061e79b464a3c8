// Static analysis of a rule set against a target (`graphfuse check --target`).
#pragma once

#include <string>
#include <vector>

#include "graphfuse/rules.h"
#include "graphfuse/target.h"

namespace graphfuse::target {

/// One warning about a rule.
struct Finding {
  enum class Kind { Unusable, Partial, Shadowed, Undoes };
  Kind kind;
  SourceLoc loc;      ///< the rule's position
  std::string rule;
  std::string message;
};

/// Rules that can never fire on `t` (they create an op it lacks, or with an attribute
/// value its conditions refuse), rules that fire only for some of the ops their
/// pattern accepts, rules shadowed by an earlier or higher-benefit rule with the same
/// match program, and pairs of rules whose rewrites undo each other. In rule order.
std::vector<Finding> check_rules(const RuleSet& rules, const TargetProfile& t);

/// "unusable", "partial", "shadowed", "undoes".
const char* finding_kind_name(Finding::Kind k);

}  // namespace graphfuse::target
