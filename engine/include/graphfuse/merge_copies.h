// Merging the copies of one computation that a rewrite made. A rule that fuses one block
// at a time writes its helper nodes once per block: BERT's Attention fusion casts the same
// attention mask to int32 for every layer. Two such nodes that compute the same value
// become one (common-subexpression elimination, restricted to what the rules created).
#pragma once

#include <cstddef>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Rewires the readers of every node a rewrite created beside the nodes it replaced in
/// place (NodeId >= `first_new`, carrying `_rule`: helper nodes such as that Cast, never a
/// fused node that took a matched node's place, nor the model's own nodes) that repeats
/// another such node to that one. Two repeat each other when they have the same op, the
/// same inputs (the same values, in order), the same number of outputs and the same
/// attributes apart from `_rule`; the one whose id sorts first is kept, and copies of
/// copies merge too. Left alone: a node that is a graph output or unread, has no inputs
/// (constants), holds a subgraph or is nondeterministic (ONNX's Random* ops, Multinomial,
/// Bernoulli, Dropout). The repeats keep their place without readers; DeadNodeSweep
/// (graphfuse/dead_nodes.h) removes them. Returns how many nodes were rewired.
/// Deterministic; costs nothing beyond the created nodes.
std::size_t merge_rule_copies(Graph& g, NodeId first_new);

}  // namespace graphfuse
