// A failed constraint in its author's words: the values each side had on the graph, and
// "unknown" kept apart from "false" ("`dim(x, 1)` is unknown: 'x' has no known shape").
#pragma once

#include <string>

#include "graphfuse/graph.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::rewrite {

/// Why check `c` does not hold on embedding `e` (the registers bound when it ran), in the
/// pattern's names: "`dim(w, 2)` is 3, want == 1".
std::string check_facts(const Graph& g, const match::MatchProgram& p, const match::ExprCheck& c,
                        const match::Embedding& e);

}  // namespace graphfuse::rewrite
