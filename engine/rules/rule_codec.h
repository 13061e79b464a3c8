// Compiled rules as bytes and back, for the rule cache (rule_cache.h): the exact Rule
// values the loader built, so a rule set read back rewrites exactly as the one compiled.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/rules.h"

namespace graphfuse::rules {

/// The rules (in RuleSet order) and their files, plus the names of every op they use in the
/// order they were interned (so a fresh process that reads them back interns them, and
/// numbers them, as compiling did).
std::string encode_rules(const std::vector<Rule>& rules, const std::vector<RuleFileInfo>& files);

/// The inverse of encode_rules. False when the bytes are truncated or malformed, or when a
/// rule calls a native function that is not registered now (compiling would fail: the
/// caller compiles instead, and reports it).
bool decode_rules(std::string_view bytes, std::vector<Rule>& rules, std::vector<RuleFileInfo>& files);

}  // namespace graphfuse::rules
