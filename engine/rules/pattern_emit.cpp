// Pattern compiler, back half: the root-anchored match program, with choice points for
// commutative operand orders and for the consumers that lead to further roots.
#include <algorithm>

#include "rules/pattern_compiler.h"

namespace graphfuse::rules {

using match::Instr;
using match::Opcode;

void PatternCompiler::emit_op(Opcode op, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t aux,
                              dsl::Pos pos) {
  out_.program.code.push_back(Instr{op, a, b, c, aux, pos});
}

std::vector<OpType> PatternCompiler::op_set(const dsl::Call& call) const {
  std::vector<OpType> ops;
  for (const std::string& s : call.ops) {
    if (s == "*") return {};
    ops.push_back(OpType::intern(s));
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

std::uint32_t PatternCompiler::new_value(const std::string& name) {
  match::MatchProgram& p = out_.program;
  p.value_names.push_back(name);
  value_bound_.push_back(0);
  return p.num_value_regs++;
}

void PatternCompiler::add_pending(match::ExprCheck c, dsl::Pos pos) {
  PendingCheck pc{std::move(c), {}, {}, pos};
  term_registers(pc.check.lhs, first_.program, pc.nodes, pc.values);
  term_registers(pc.check.rhs, first_.program, pc.nodes, pc.values);
  pc.after_each = reads_each_list(pc.check.lhs, first_.program) || reads_each_list(pc.check.rhs, first_.program);
  // A constraint may read any value, a later root's own leaves too: the worklist looks
  // again at the first roots beside a changed later root (engine/rewrite/worklist.cpp).
  if (!pc.values.empty() || pc.check.lhs.fn == match::Fn::Native) leaf_checks_ = true;
  pending_.push_back(std::move(pc));
}

// Emits every pending check whose registers are all bound: as early as possible, so a
// failing constraint cuts the search before more of the pattern is explored.
void PatternCompiler::flush() {
  if (!with_checks_) return;
  auto ready = [&](const PendingCheck& c) {
    if (c.after_each && !eaches_done_) return false;  // the elements are checked last
    for (std::uint32_t n : c.nodes)
      if (n >= node_bound_.size() || !node_bound_[n]) return false;
    for (std::uint32_t v : c.values)
      if (v >= value_bound_.size() || !value_bound_[v]) return false;
    return true;
  };
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!ready(*it)) {
      ++it;
      continue;
    }
    out_.program.exprs.push_back(std::move(it->check));
    emit_op(Opcode::CheckExpr, 0, 0, 0, static_cast<std::uint32_t>(out_.program.exprs.size() - 1), it->pos);
    it = pending_.erase(it);
  }
}

void PatternCompiler::node_checks(int n, std::uint32_t reg) {
  match::MatchProgram& p = out_.program;
  const dsl::Call& call = *nodes_[n].call;
  std::vector<OpType> ops = op_set(call);
  if (!ops.empty()) {
    p.op_sets.push_back(ops);
    emit_op(Opcode::CheckOp, reg, 0, 0, static_cast<std::uint32_t>(p.op_sets.size() - 1), call.pos);
  }
  bool variadic = ends_variadic(n);
  auto fixed = static_cast<std::uint32_t>(args_[n].size() - (variadic ? 1 : 0));
  emit_op(variadic ? Opcode::CheckMinArity : Opcode::CheckArity, reg, fixed, 0, 0, call.pos);
  if (nodes_[n].multi)
    emit_op(Opcode::CheckOutputs, reg, static_cast<std::uint32_t>(nodes_[n].names.size()), 0, 0, nodes_[n].pos);
  for (const dsl::AttrItem& it : call.attrs) {
    match::AttrCheck chk;
    chk.node = reg;
    chk.key = it.key;
    switch (it.kind) {
      case dsl::AttrItem::Kind::Spread:
        fail(it.pos, "`..." + it.key + "` copies attributes in a rewrite; it has no meaning in a pattern");
      case dsl::AttrItem::Kind::Absent:
        chk.cmp = match::Cmp::Absent;
        break;
      case dsl::AttrItem::Kind::Assign:
      case dsl::AttrItem::Kind::Constraint: {
        chk.cmp = cmp_of(it.kind == dsl::AttrItem::Kind::Assign ? "==" : it.op);
        if (!std::holds_alternative<dsl::Literal>(it.value.value)) {
          // A computed right side (`strides = a.strides`): a check placed once every
          // node it names is bound.
          if (!with_checks_) continue;
          match::ExprCheck e;
          e.cmp = chk.cmp;
          e.lhs.kind = match::Term::Kind::Attr;
          e.lhs.reg = reg;
          e.lhs.key = it.key;
          e.rhs = TermCompiler(first_.names, o_, ops_).term(it.value);
          add_pending(std::move(e), it.pos);
          continue;
        }
        chk.literal = literal_to_attr(std::get<dsl::Literal>(it.value.value), o_);
        if (chk.cmp == match::Cmp::In && !std::holds_alternative<std::vector<std::int64_t>>(chk.literal) &&
            !std::holds_alternative<std::vector<float>>(chk.literal) &&
            !std::holds_alternative<std::vector<std::string>>(chk.literal) &&
            !std::holds_alternative<std::vector<bool>>(chk.literal))
          fail(it.value.pos, "`in` needs a list on its right side");
        break;
      }
    }
    p.attr_checks.push_back(std::move(chk));
    emit_op(Opcode::CheckAttr, reg, 0, 0, static_cast<std::uint32_t>(p.attr_checks.size() - 1), it.pos);
  }
}

void PatternCompiler::bind_node(int n) {
  match::MatchProgram& p = out_.program;
  auto reg = static_cast<std::uint32_t>(p.node_names.size());
  reg_[n] = static_cast<int>(reg);
  const PNode& pn = nodes_[n];
  p.node_names.push_back(pn.names.empty() ? "" : pn.names[0]);
  p.node_pos.push_back(pn.pos);
  p.internal_uses.push_back(0);
  node_bound_.push_back(1);
  for (std::uint32_t k = 0; k < pn.names.size(); ++k)
    if (!pn.names[k].empty()) out_.names[pn.names[k]] = PatternName{PatternName::Kind::Node, reg, k, pn.pos, pn.call->ops};
  node_checks(n, reg);
  flush();
}

void PatternCompiler::process_arg(int n, std::size_t k, std::uint32_t v) {
  match::MatchProgram& p = out_.program;
  const Arg& a = args_[n][k];
  value_bound_[v] = 1;
  switch (a.kind) {
    case Arg::Kind::Leaf: {
      auto [it, fresh] = leaf_reg_.emplace(a.leaf, v);
      if (fresh) {
        p.leaf_regs.push_back(v);
        p.value_names[v] = a.leaf;
        out_.names[a.leaf] = PatternName{PatternName::Kind::Leaf, v, 0, a.pos, {}};
      } else {
        emit_op(Opcode::SameValue, it->second, v, 0, 0, a.pos);
      }
      break;
    }
    case Arg::Kind::Literal:
      p.consts.push_back(a.constant);
      emit_op(Opcode::CheckConst, v, 0, 0, static_cast<std::uint32_t>(p.consts.size() - 1), a.pos);
      p.leaf_regs.push_back(v);
      leaf_checks_ = true;
      break;
    case Arg::Kind::Node:
      if (reg_[a.node] < 0) {
        auto next = static_cast<std::uint32_t>(p.node_names.size());
        emit_op(Opcode::Producer, v, a.port, next, 0, a.pos);
        bind_node(a.node);
        queue_.push_back(a.node);
      } else {
        emit_op(Opcode::ValueIs, v, static_cast<std::uint32_t>(reg_[a.node]), a.port, 0, a.pos);
      }
      ++p.internal_uses[static_cast<std::size_t>(reg_[a.node])];
      break;
    case Arg::Kind::Wildcard:
    case Arg::Kind::Variadic:
    case Arg::Kind::Each:
      break;
  }
  flush();
}

namespace {
// Two arguments that bind the same way: exchanging them gives the same embeddings.
bool same_arg(const Arg& a, const Arg& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Arg::Kind::Wildcard: return true;
    case Arg::Kind::Leaf: return a.leaf == b.leaf;
    case Arg::Kind::Node: return a.node == b.node && a.port == b.port;
    default: return false;
  }
}
}  // namespace

void PatternCompiler::process_args(int n) {
  match::MatchProgram& p = out_.program;
  const auto nreg = static_cast<std::uint32_t>(reg_[n]);
  const std::vector<Arg>& args = args_[n];
  if (!commutative(n) || args.size() < 2) {
    for (std::size_t k = 0; k < args.size(); ++k) {
      const Arg& a = args[k];
      if (a.kind == Arg::Kind::Variadic) {
        p.variadics.push_back(match::Variadic{nreg, static_cast<std::uint32_t>(k), a.leaf});
        if (!a.leaf.empty())
          out_.names[a.leaf] =
              PatternName{PatternName::Kind::Variadic, static_cast<std::uint32_t>(p.variadics.size() - 1), 0, a.pos, {}};
        continue;
      }
      if (a.kind == Arg::Kind::Each) {
        each_args_.emplace_back(n, k);
        continue;
      }
      if (a.kind == Arg::Kind::Wildcard) continue;
      std::uint32_t v = new_value("");
      emit_op(Opcode::LoadInput, nreg, static_cast<std::uint32_t>(k), v, 0, a.pos);
      process_arg(n, k, v);
    }
    return;
  }
  // Commutative: every distinct assignment of operands to input slots, as the branches
  // of one fork; identical operands (`Mul(x, x)`, two `_`) are not permuted among
  // themselves, so each branch can give different embeddings.
  std::vector<std::size_t> perm(args.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::vector<std::vector<std::size_t>> perms;  // perms[j][slot] = the argument read there
  do {
    bool dup = std::any_of(perms.begin(), perms.end(), [&](const std::vector<std::size_t>& q) {
      for (std::size_t s = 0; s < q.size(); ++s)
        if (!same_arg(args[q[s]], args[perm[s]])) return false;
      return true;
    });
    if (!dup) perms.push_back(perm);
  } while (std::next_permutation(perm.begin(), perm.end()));
  std::vector<std::uint32_t> v(args.size(), 0);
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].kind != Arg::Kind::Wildcard) v[i] = new_value("");
  auto loads = [&](const std::vector<std::size_t>& q) {
    for (std::size_t s = 0; s < q.size(); ++s)
      if (args[q[s]].kind != Arg::Kind::Wildcard)
        emit_op(Opcode::LoadInput, nreg, static_cast<std::uint32_t>(s), v[q[s]], 0, args[q[s]].pos);
  };
  if (perms.size() == 1) {
    loads(perms[0]);
  } else {
    auto fork = static_cast<std::uint32_t>(p.forks.size());
    p.forks.emplace_back();
    emit_op(Opcode::Fork, 0, 0, 0, fork, nodes_[n].call->pos);
    std::vector<std::size_t> jumps;
    for (const auto& q : perms) {
      p.forks[fork].push_back(static_cast<std::uint32_t>(p.code.size()));
      loads(q);
      jumps.push_back(p.code.size());
      emit_op(Opcode::Jump, 0, 0, 0, 0, nodes_[n].call->pos);
    }
    for (std::size_t j : jumps) p.code[j].aux = static_cast<std::uint32_t>(p.code.size());
  }
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].kind != Arg::Kind::Wildcard) process_arg(n, i, v[i]);
}

match::AttrCheck PatternCompiler::each_attr_check(const dsl::AttrItem& it) const {
  match::AttrCheck chk;
  chk.key = it.key;
  if (it.kind == dsl::AttrItem::Kind::Absent) {
    chk.cmp = match::Cmp::Absent;
    return chk;
  }
  chk.cmp = cmp_of(it.kind == dsl::AttrItem::Kind::Assign ? "==" : it.op);
  if (const auto* ref = std::get_if<dsl::AttrRef>(&it.value.value)) {
    chk.other_node = reg_[bound_.at(ref->node).first];  // resolve_each checked the name
    chk.other_key = ref->attr;
    return chk;
  }
  chk.literal = literal_to_attr(std::get<dsl::Literal>(it.value.value), o_);
  return chk;
}

// The eaches, once every pattern node is bound: an element must differ from all of them
// (the VM compares it with every register), and their attributes may name any of them.
// Their lists are registered here too, so both passes number them alike.
void PatternCompiler::emit_eaches() {
  match::MatchProgram& p = out_.program;
  for (const auto& [n, k] : each_args_) {
    const Arg& a = args_[n][k];
    match::Each ea;
    ea.node = static_cast<std::uint32_t>(reg_[n]);
    ea.start = static_cast<std::uint32_t>(k);
    ea.ops = op_set(*a.each);
    ea.arity = static_cast<std::uint32_t>(a.each->args.size());
    for (const dsl::AttrItem& it : a.each->attrs) ea.attrs.push_back(each_attr_check(it));
    auto index = static_cast<std::int32_t>(p.eaches.size());
    for (std::uint32_t slot = 0; slot < a.each_lists.size(); ++slot) {
      const std::string& name = a.each_lists[slot];
      if (name.empty()) continue;
      ea.required.push_back(slot);  // a leaf never binds an absent optional input
      p.variadics.push_back(match::Variadic{ea.node, ea.start, name, index, slot});
      out_.names[name] = PatternName{PatternName::Kind::Variadic, static_cast<std::uint32_t>(p.variadics.size() - 1), 0,
                                     a.each->args[slot].pos, {}};
    }
    p.eaches.push_back(std::move(ea));
    emit_op(Opcode::CheckEach, 0, 0, 0, static_cast<std::uint32_t>(index), a.each->pos);
  }
  eaches_done_ = true;
  if (!each_args_.empty()) leaf_checks_ = true;  // the elements' producers sit one step above them
}

// A root after the first is reached as a consumer of a value already bound.
void PatternCompiler::connect_root(int r) {
  match::MatchProgram& p = out_.program;
  std::uint32_t v = 0, slot = 0;
  bool found = false;
  for (std::size_t k = 0; k < args_[r].size() && !found; ++k) {
    const Arg& a = args_[r][k];
    slot = static_cast<std::uint32_t>(k);
    if (a.kind == Arg::Kind::Leaf && leaf_reg_.count(a.leaf)) {
      v = leaf_reg_[a.leaf];
      found = true;
    } else if (a.kind == Arg::Kind::Node && reg_[a.node] >= 0) {
      v = new_value("");
      emit_op(Opcode::OutputOf, static_cast<std::uint32_t>(reg_[a.node]), a.port, v, 0, a.pos);
      value_bound_[v] = 1;
      found = true;
    }
  }
  if (commutative(r)) slot = match::kAnySlot;
  emit_op(Opcode::Consumer, v, slot, static_cast<std::uint32_t>(p.node_names.size()), 0, nodes_[r].pos);
  bind_node(r);
  queue_.assign(1, r);
  for (std::size_t head = 0; head < queue_.size(); ++head) process_args(queue_[head]);
}

void PatternCompiler::emit(bool with_checks) {
  if (with_checks) first_ = std::move(out_);
  out_ = CompiledPattern{};
  with_checks_ = with_checks;
  reg_.assign(nodes_.size(), -1);
  leaf_reg_.clear();
  node_bound_.clear();
  value_bound_.clear();
  pending_.clear();
  each_args_.clear();
  eaches_done_ = false;
  leaf_checks_ = false;
  if (with_checks)
    for (const WhereItem& w : where_) {
      match::ExprCheck c = TermCompiler(first_.names, w.origin, ops_).check(w.constraint);
      c.loc = w.origin.map(w.constraint.pos);
      c.text = w.text;
      add_pending(std::move(c), w.constraint.pos);
    }
  match::MatchProgram& p = out_.program;
  bind_node(roots_[0]);
  // Breadth first from the root: each node's inputs are loaded together, and a newly
  // reached producer's op is checked immediately, so most candidates fail early.
  queue_.assign(1, roots_[0]);
  for (std::size_t head = 0; head < queue_.size(); ++head) process_args(queue_[head]);
  for (std::size_t i = 1; i < roots_.size(); ++i) connect_root(roots_[i]);
  p.num_node_regs = static_cast<std::uint32_t>(p.node_names.size());
  emit_eaches();
  flush();
  p.roots.clear();
  for (int r : roots_) p.roots.push_back(static_cast<std::uint32_t>(reg_[r]));
  p.root_outputs = root_outputs_;
  emit_op(Opcode::Accept, 0, 0, 0, 0, nodes_[roots_[0]].pos);
  out_.root_ops = op_set(*nodes_[roots_[0]].call);
  out_.leaf_depth = height_[roots_[0]] + 1;
  out_.depth = (roots_.size() > 1 || leaf_checks_) ? out_.leaf_depth : height_[roots_[0]];
}

}  // namespace graphfuse::rules
