// The values an embedding reaches beyond its registers: a variadic list's values and the
// element nodes of its eaches, read off the graph as it is now.
#pragma once

#include <cstdint>
#include <vector>

#include "graphfuse/graph.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::match {

/// The values of variadic list `i` in `e`: the node's inputs from the list's start, or for
/// a list inside an each, the chosen input of every element node.
std::vector<ValueRef> variadic_values(const Graph& g, const Embedding& e, const MatchProgram& p,
                                      std::uint32_t i);

/// Appends the element nodes of every each of `p` in `e` (MatchProgram::eaches): the
/// producers of the inputs the eaches cover, read off the graph as it is now.
void append_each_nodes(const Graph& g, const Embedding& e, const MatchProgram& p, std::vector<NodeId>& out);

}  // namespace graphfuse::match
