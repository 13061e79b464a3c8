// "did you mean" for names a rule author mistyped (attribute names, rule keys).
#pragma once

#include <string>
#include <vector>

#include "rules/compile.h"

namespace graphfuse::rules {

/// "; did you mean 'perm'?" when one of `known` is within a small edit distance of `word`
/// (adjacent swaps count as one edit: `prem` -> `perm`; case is ignored: `Relu` -> `ReLU`),
/// the closest first in `known`'s order; "" when none is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

/// The error for attribute `key` of `op` when the op's `attrs:` is declared and does not
/// list it ("attribute 'prem' is not declared for Transpose (declared at f:3:3: perm); did
/// you mean 'perm'?"); "" when the attribute is declared, the op declares no `attrs:`, or
/// the key is graphfuse's own (`_rule`: names starting with '_').
std::string undeclared_attribute(const OpSchema& s, const std::string& op, const std::string& key);

}  // namespace graphfuse::rules
