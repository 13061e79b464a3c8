// Whether a constant matches a pattern literal (`1.0`, `[0, 1]`, `true`): the match VM's
// CheckConst.
#pragma once

#include "graphfuse/graph.h"
#include "match/program.h"

namespace graphfuse::match {

/// True when value v is a constant whose elements all match `c` (see ConstCheck).
bool const_matches(const Graph& g, ValueRef v, const ConstCheck& c);

}  // namespace graphfuse::match
