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
  std::vector<std::pair<std::uint32_t, std::uint32_t>> choices;  ///< (choice pc, alternative)
  std::vector<Use> uses;  ///< scratch for Consumer: the consumers of `uses_of`
  ValueRef uses_of;
  /// The largest pc at which a step failed in the last run: the furthest the search got,
  /// which is what a why-not explanation reports.
  std::uint32_t furthest_fail = 0;
  /// When set (why-not explanations only), `furthest` is the embedding as the failing
  /// step at furthest_fail saw it: with backtracking, `emb` later belongs to another path.
  bool keep_furthest = false;
  Embedding furthest;
  /// Instructions executed, summed over runs (the cost measure of the commutative figures).
  std::uint64_t steps = 0;
};

/// Executes one check instruction (not Fork, Jump, Consumer or Accept); false when it fails.
bool vm_step(const MatchProgram& p, const Graph& g, const Instr& in, Embedding& e);

/// Binds node reg in.c to the first consumer at or after position `from` of the value in
/// value reg in.a that passes the slot and distinctness tests; returns the position used,
/// or -1 when none is left. `uses` holds the consumers of `uses_of`: read at position 0,
/// kept for the resumes that follow.
std::int64_t vm_consumer(const Graph& g, const Instr& in, Embedding& e, std::uint32_t from,
                         std::vector<Use>& uses, ValueRef& uses_of);

inline void note_fail(VmState& st, std::uint32_t pc) {
  st.furthest_fail = pc;
  if (st.keep_furthest) st.furthest = st.emb;
}

/// Runs `p` with node register 0 = `root`. Calls `on_match(const Embedding&)` for every
/// embedding, in a deterministic order; the search continues while it returns true.
/// Returns the number of embeddings reported. Patterns with commutative ops may report
/// the same embedding more than once (once per operand order that yields it).
template <class OnMatch>
std::size_t run_program(const MatchProgram& p, const Graph& g, NodeId root, VmState& st,
                        OnMatch&& on_match) {
  st.emb.nodes.assign(p.num_node_regs, kNoNode);
  st.emb.values.assign(p.num_value_regs, ValueRef{});
  st.emb.nodes[0] = root;
  st.choices.clear();
  st.furthest_fail = 0;
  if (st.keep_furthest) st.furthest = st.emb;
  std::size_t found = 0;
  std::uint32_t pc = 0;
  for (;;) {
    const Instr& in = p.code[pc];
    ++st.steps;
    bool ok = true;
    switch (in.op) {
      case Opcode::Fork:
        st.choices.emplace_back(pc, 0);
        pc = p.forks[in.aux][0];
        continue;
      case Opcode::Jump:
        pc = in.aux;
        continue;
      case Opcode::Consumer: {
        std::int64_t at = vm_consumer(g, in, st.emb, 0, st.uses, st.uses_of);
        ok = at >= 0;
        if (ok) st.choices.emplace_back(pc, static_cast<std::uint32_t>(at));
        else if (pc > st.furthest_fail) note_fail(st, pc);
        break;
      }
      case Opcode::Accept:
        ++found;
        if (!on_match(static_cast<const Embedding&>(st.emb))) return found;
        ok = false;  // look for further embeddings
        break;
      default:
        ok = vm_step(p, g, in, st.emb);
        if (!ok && pc > st.furthest_fail) note_fail(st, pc);
        break;
    }
    if (ok) {
      ++pc;
      continue;
    }
    // Backtrack: resume the most recent choice point that has an untried alternative.
    for (;;) {
      if (st.choices.empty()) return found;
      auto& [choice_pc, alt] = st.choices.back();
      const Instr& c = p.code[choice_pc];
      if (c.op == Opcode::Consumer) {
        std::int64_t at = vm_consumer(g, c, st.emb, alt + 1, st.uses, st.uses_of);
        if (at >= 0) {
          alt = static_cast<std::uint32_t>(at);
          pc = choice_pc + 1;
          break;
        }
      } else {
        const auto& targets = p.forks[c.aux];
        if (++alt < targets.size()) {
          pc = targets[alt];
          break;
        }
      }
      st.choices.pop_back();
    }
  }
}

}  // namespace graphfuse::match
