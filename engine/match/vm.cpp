// The match VM's checks: op, arity, input loads, producers, value identity, attributes.
#include "match/vm.h"

#include <algorithm>

#include "graph/storage.h"
#include "match/attr_compare.h"
#include "match/const_check.h"
#include "match/eval.h"

namespace graphfuse::match {

namespace {

// Attribute check c on node n (a pattern node's, or an each's element).
bool check_attr(const AttrCheck& c, const Graph& g, const Embedding& e, NodeId n) {
  const AttrValue* a = records::node(g, n).attrs.find(c.key);
  if (c.cmp == Cmp::Absent) return a == nullptr;
  if (a == nullptr) return false;
  if (c.cmp == Cmp::Has) return true;
  if (c.other_node < 0) return attr_compare(*a, c.cmp, c.literal);
  const AttrValue* b = records::node(g, e.nodes[static_cast<std::size_t>(c.other_node)]).attrs.find(c.other_key);
  return b != nullptr && attr_compare(*a, c.cmp, *b);
}

// Every element of an each: its own producer node, of the op, arity and attributes asked,
// distinct from the pattern nodes (all bound by now) and from the other elements.
bool check_each(const Each& ea, const Graph& g, const Embedding& e) {
  const auto& ins = records::node(g, e.nodes[ea.node]).inputs;
  for (std::size_t k = ea.start; k < ins.size(); ++k) {
    ValueRef v = ins[k];
    if (!v.valid() || v.port != 0) return false;
    if (!ea.ops.empty() && std::find(ea.ops.begin(), ea.ops.end(), g.storage().hot[v.node].op) == ea.ops.end())
      return false;
    const Node& el = records::node(g, v.node);
    if (el.inputs.size() != ea.arity) return false;
    for (std::uint32_t s : ea.required)
      if (!el.inputs[s].valid()) return false;
    if (std::find(e.nodes.begin(), e.nodes.end(), v.node) != e.nodes.end()) return false;
    for (std::size_t j = ea.start; j < k; ++j)
      if (ins[j].node == v.node) return false;
    for (const AttrCheck& c : ea.attrs)
      if (!check_attr(c, g, e, v.node)) return false;
  }
  return true;
}

}  // namespace

bool vm_step(const MatchProgram& p, const Graph& g, const Instr& in, Embedding& e) {
  switch (in.op) {
    case Opcode::CheckOp: {
      const auto& set = p.op_sets[in.aux];
      // From the hot record, not the node: a producer that is not the op sought is
      // rejected without loading its 128-byte record (a cache miss at 10^7 nodes).
      OpType op = g.storage().hot[e.nodes[in.a]].op;
      // Sets are tiny (one op, or a few alternatives): a linear scan beats a search.
      return std::find(set.begin(), set.end(), op) != set.end();
    }
    case Opcode::CheckArity:
      return records::node(g, e.nodes[in.a]).inputs.size() == in.b;
    case Opcode::CheckMinArity:
      return records::node(g, e.nodes[in.a]).inputs.size() >= in.b;
    case Opcode::CheckOutputs:
      return records::node(g, e.nodes[in.a]).outputs.size() == in.b;
    case Opcode::LoadInput: {
      const auto& inputs = records::node(g, e.nodes[in.a]).inputs;
      if (in.b >= inputs.size() || !inputs[in.b].valid()) return false;
      e.values[in.c] = inputs[in.b];
      return true;
    }
    case Opcode::Producer: {
      ValueRef v = e.values[in.a];
      if (v.port != in.b) return false;
      // Distinct pattern nodes match distinct graph nodes (registers below c are bound).
      for (std::uint32_t r = 0; r < in.c; ++r)
        if (e.nodes[r] == v.node) return false;
      e.nodes[in.c] = v.node;
      return true;
    }
    case Opcode::ValueIs:
      return e.values[in.a] == ValueRef{e.nodes[in.b], in.c};
    case Opcode::SameValue:
      return e.values[in.a] == e.values[in.b];
    case Opcode::OutputOf:
      e.values[in.c] = ValueRef{e.nodes[in.a], in.b};
      return true;
    case Opcode::CheckConst:
      return const_matches(g, e.values[in.a], p.consts[in.aux]);
    case Opcode::CheckAttr:
      return check_attr(p.attr_checks[in.aux], g, e, e.nodes[p.attr_checks[in.aux].node]);
    case Opcode::CheckEach:
      return check_each(p.eaches[in.aux], g, e);
    case Opcode::CheckExpr:
      return eval_check(p.exprs[in.aux], g, e, p);
    case Opcode::Consumer:
    case Opcode::Fork:
    case Opcode::Jump:
    case Opcode::Accept:
      break;
  }
  return false;
}

std::int64_t vm_consumer(const Graph& g, const Instr& in, Embedding& e, std::uint32_t from,
                         std::vector<Use>& uses, ValueRef& uses_of) {
  // Read at a choice point's first try; its resumes reuse the list unless another
  // Consumer step read another value's since. The graph does not change while matching,
  // so the list and its positions stay valid. (Re-reading on every resume cost the
  // value's whole fan-out per alternative: quadratic on a value with 10^5 users.)
  if (from == 0 || !(uses_of == e.values[in.a])) {
    uses = g.consumers(e.values[in.a]);
    uses_of = e.values[in.a];
  }
  for (std::size_t k = from; k < uses.size(); ++k) {
    const Use& u = uses[k];
    if (in.b != kAnySlot && u.slot != in.b) continue;
    // With any slot, a node reading the value twice is one candidate, not two.
    if (in.b == kAnySlot && k > 0 && uses[k - 1].node == u.node) continue;
    bool taken = false;
    for (std::uint32_t r = 0; r < in.c && !taken; ++r) taken = e.nodes[r] == u.node;
    if (taken) continue;
    e.nodes[in.c] = u.node;
    return static_cast<std::int64_t>(k);
  }
  return -1;
}

}  // namespace graphfuse::match
