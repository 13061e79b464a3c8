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
/// Interior nodes must be used only by the match and must not be graph outputs; the
/// root may have any consumers. With these rules no rewrite can create a cycle: the
/// template's inputs are all ancestors of the root, and a path from the root back to
/// one of them would have to leave the match through an interior node's external use.
int check_legal(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e,
                const std::vector<char>& is_output);

}  // namespace graphfuse::rewrite
