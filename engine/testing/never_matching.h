// Rules that can never match a set of input graphs: a pattern node asks for ops that no
// input holds and no rule that can itself fire ever creates (`Relu` written for a graph of
// `ReLU`s). `graphfuse test` warns about them: otherwise every `unchanged` case passes.
#pragma once

#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rules.h"

namespace graphfuse::testing {

/// An enabled rule that cannot match any of `inputs`, even after other rules fired, with
/// why: "rule 'r' (f.yaml:3:5) can never match these inputs: no input has an op Relu and no
/// rule creates one; did you mean 'ReLU'?".
struct NeverMatching {
  std::string rule;  ///< Rule::label(), which tells rules of one name in two files apart
  std::string file;  ///< the rule file it comes from
  std::string message;
};
std::vector<NeverMatching> never_matching_rules(const RuleSet& rules, const std::vector<Graph>& inputs);

}  // namespace graphfuse::testing
