// Convexity of a match: would replacing its roots create a cycle in the graph?
#pragma once

#include "graphfuse/graph.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::match {

/// True when rewriting embedding `e` would create a cycle: a value the match reads from
/// outside it (a leaf, a variadic input) depends, through nodes outside the match, on one
/// of the roots the rewrite replaces. With one root this cannot happen (everything the
/// rewrite reads is upstream of that root), so it is only worth asking for patterns with
/// several roots. Costs a search downstream of the roots, bounded by the graph's size.
bool creates_cycle(const Graph& g, const MatchProgram& p, const Embedding& e);

}  // namespace graphfuse::match
