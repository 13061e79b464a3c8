// Evaluating constraint and rewrite expressions (Terms) on an embedding, read-only. The
// facts of constants they read are in graph/const_facts.h, list helpers in attr_lists.h.
#pragma once

#include <optional>
#include <vector>

#include "graphfuse/graph.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::match {

/// The value of `t` on embedding `e`, or nullopt when a fact it needs is unknown
/// (missing attribute, unknown shape, a non-constant where a constant is needed).
std::optional<AttrValue> eval_term(const Term& t, const Graph& g, const Embedding& e,
                                   const MatchProgram& p);

/// True when check `c` holds on `e`. An unknown fact makes any check false, negated
/// or not: `!(rank(x) == 4)` does not hold when the rank of x is unknown.
bool eval_check(const ExprCheck& c, const Graph& g, const Embedding& e, const MatchProgram& p);

}  // namespace graphfuse::match
