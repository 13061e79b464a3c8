// Evaluating constraint and rewrite expressions (Terms) on an embedding, read-only.
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

/// True when value v is a constant whose elements all match `c` (see ConstCheck).
bool const_matches(const Graph& g, ValueRef v, const ConstCheck& c);

/// The values of variadic list `i` in `e`: the node's inputs from the list's start, or for
/// a list inside an each, the chosen input of every element node.
std::vector<ValueRef> variadic_values(const Graph& g, const Embedding& e, const MatchProgram& p,
                                      std::uint32_t i);

/// Appends the element nodes of every each of `p` in `e` (MatchProgram::eaches): the
/// producers of the inputs the eaches cover, read off the graph as it is now.
void append_each_nodes(const Graph& g, const Embedding& e, const MatchProgram& p, std::vector<NodeId>& out);

/// What is known of a value's type: the producer's OutputInfo type, completed from a
/// constant tensor (or a TF-style Const `shape` attribute) when there is one.
ValueType known_type(const Graph& g, ValueRef v);

/// Element k of a tensor with data as a double (float, int and bool element types);
/// nullopt for types without a numeric reading.
std::optional<double> tensor_element(const Tensor& t, std::int64_t k);

}  // namespace graphfuse::match
