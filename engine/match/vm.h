// The match VM: runs a MatchProgram at one candidate root, backtracking at choice points.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "graphfuse/graph.h"
#include "match/program.h"

namespace graphfuse::match {

/// One embedding of a pattern: node register -> graph node, value register -> value.
struct Embedding {
  std::vector<NodeId> nodes;
  std::vector<ValueRef> values;
};

/// Per-thread scratch reused across candidates (no allocation per candidate).
struct VmState {
  Embedding emb;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> choices;  ///< (fork pc, alternative)
  /// The largest pc at which a step failed in the last run: the furthest the search got,
  /// which is what a why-not explanation reports.
  std::uint32_t furthest_fail = 0;
};

/// Executes one non-control instruction; false when the check fails.
bool vm_step(const MatchProgram& p, const Graph& g, const Instr& in, Embedding& e);

/// Runs `p` with node register 0 = `root`. Calls `on_match(const Embedding&)` for every
/// embedding, in a deterministic order; the search continues while it returns true.
/// Returns the number of embeddings reported.
template <class OnMatch>
std::size_t run_program(const MatchProgram& p, const Graph& g, NodeId root, VmState& st,
                        OnMatch&& on_match) {
  st.emb.nodes.assign(p.num_node_regs, kNoNode);
  st.emb.values.assign(p.num_value_regs, ValueRef{});
  st.emb.nodes[0] = root;
  st.choices.clear();
  st.furthest_fail = 0;
  std::size_t found = 0;
  std::uint32_t pc = 0;
  for (;;) {
    const Instr& in = p.code[pc];
    bool ok = true;
    switch (in.op) {
      case Opcode::Fork:
        st.choices.emplace_back(pc, 0);
        pc = p.forks[in.aux][0];
        continue;
      case Opcode::Jump:
        pc = in.aux;
        continue;
      case Opcode::Accept:
        ++found;
        if (!on_match(static_cast<const Embedding&>(st.emb))) return found;
        ok = false;  // look for further embeddings
        break;
      default:
        ok = vm_step(p, g, in, st.emb);
        if (!ok && pc > st.furthest_fail) st.furthest_fail = pc;
        break;
    }
    if (ok) {
      ++pc;
      continue;
    }
    // Backtrack: resume the most recent choice point that has an untried alternative.
    for (;;) {
      if (st.choices.empty()) return found;
      auto& [fork_pc, alt] = st.choices.back();
      const auto& targets = p.forks[p.code[fork_pc].aux];
      if (++alt < targets.size()) {
        pc = targets[alt];
        break;
      }
      st.choices.pop_back();
    }
  }
}

}  // namespace graphfuse::match
