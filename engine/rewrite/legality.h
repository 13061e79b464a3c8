// Legality of a match per DESIGN.md, decided read-only (it runs inside parallel matching).
#pragma once

#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::rewrite {

/// Why `e` may not be rewritten by `rule`, or -1 when it may. Codes are RejectReason
/// values. `is_output[n]` says whether node n has a graph output (sized to capacity).
///
/// Interior nodes must be used only by the match and must not be graph outputs (unless
/// the rule says `on_external_use: duplicate`); roots may have any consumers. A single
/// root can never close a cycle: the template's inputs are all ancestors of the root.
/// With several roots, a path from one root to a value the rewrite reads would, so
/// such matches are searched for one and rejected (RejectReason::Cycle).
int check_legal(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e,
                const std::vector<char>& is_output);

}  // namespace graphfuse::rewrite
