// Pattern compiler: a pattern AST becomes a flat, root-anchored match program, once per rule.
#include <algorithm>
#include <cctype>
#include <functional>

#include "rules/compile.h"

namespace graphfuse::rules {

namespace {

using match::Cmp;
using match::Instr;
using match::Opcode;

std::string at(const dsl::TextOrigin& o, dsl::Pos p) {
  SourceLoc l = o.map(p);
  return "line " + std::to_string(l.line) + ":" + std::to_string(l.column);
}

// One pattern node: a call in the pattern text, named or nested.
struct PNode {
  const dsl::Call* call = nullptr;
  std::string name;  // "" for nested calls
  dsl::Pos pos;
  // Per argument: the child pattern node for nested calls, -1 otherwise.
  std::vector<int> child;
};

// An argument after name resolution.
struct Arg {
  enum class Kind { Wildcard, Leaf, Node } kind = Kind::Wildcard;
  std::string leaf;
  int node = -1;
  std::uint32_t port = 0;
  dsl::Pos pos;
};

class PatternCompiler {
 public:
  explicit PatternCompiler(const dsl::TextOrigin& o) : o_(o) {}

  CompiledPattern run(const dsl::Program& prog) {
    collect(prog);
    resolve();
    check_shape();
    emit();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(dsl::Pos p, const std::string& msg) const { throw o_.error(p, msg); }

  int add_node(const dsl::Call& call, std::string name, dsl::Pos pos) {
    int idx = static_cast<int>(nodes_.size());
    nodes_.push_back(PNode{&call, std::move(name), pos, {}});
    std::vector<int> child;
    for (const dsl::Expr& e : call.args) {
      if (e.kind == dsl::Expr::Kind::Call) child.push_back(add_node(*e.call, "", e.pos));
      else child.push_back(-1);
    }
    nodes_[idx].child = std::move(child);
    return idx;
  }

  void collect(const dsl::Program& prog) {
    if (prog.statements.empty()) fail({1, 1}, "empty pattern: the last statement must be the root call");
    for (std::size_t i = 0; i < prog.statements.size(); ++i) {
      const dsl::Statement& st = prog.statements[i];
      bool last = i + 1 == prog.statements.size();
      using K = dsl::Statement::Kind;
      if (st.kind == K::Input || st.kind == K::Output)
        fail(st.pos, "`input` and `output` belong in graph files, not in patterns");
      if (st.values.size() != 1)
        fail(st.pos, "a pattern with several roots is not supported yet");
      const dsl::Expr& v = st.values[0];
      if (st.kind == K::Bind) {
        if (st.targets.size() != 1) fail(st.pos, "multi-output bindings are not supported yet");
        const dsl::Expr& t = st.targets[0];
        if (t.kind != dsl::Expr::Kind::Name || t.port >= 0 || t.variadic || t.name == "_")
          fail(t.pos, "a binding target must be a plain name");
        if (v.kind != dsl::Expr::Kind::Call)
          fail(v.pos, "a pattern binding must be a call: `" + t.name + " = Op(...)`");
        if (auto it = bound_.find(t.name); it != bound_.end())
          fail(t.pos, "'" + t.name + "' is bound twice (first at " + at(o_, nodes_[it->second].pos) + ")");
        int n = add_node(*v.call, t.name, t.pos);
        bound_[t.name] = n;
        if (last) root_ = n;
      } else {
        if (!last) fail(st.pos, "only the last statement (the root) may be unbound; bind this call with `name = ...`");
        if (v.kind != dsl::Expr::Kind::Call)
          fail(v.pos, "the last statement of a pattern (its root) must be a call");
        root_ = add_node(*v.call, "", v.pos);
      }
    }
  }

  void resolve() {
    args_.resize(nodes_.size());
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      const dsl::Call& call = *nodes_[n].call;
      for (std::size_t k = 0; k < call.args.size(); ++k) {
        const dsl::Expr& e = call.args[k];
        Arg a;
        a.pos = e.pos;
        if (e.kind == dsl::Expr::Kind::Call) {
          a.kind = Arg::Kind::Node;
          a.node = nodes_[n].child[k];
        } else if (e.kind == dsl::Expr::Kind::Literal) {
          fail(e.pos, "constant operands in patterns are not supported yet; bind a leaf name instead");
        } else if (e.variadic) {
          fail(e.pos, "variadic operands (`" + e.name + "...`) are not supported yet");
        } else if (e.name == "_" && !e.quoted) {
          if (e.port >= 0) fail(e.pos, "`_` takes no output index");
          a.kind = Arg::Kind::Wildcard;
        } else if (auto it = bound_.find(e.name); it != bound_.end()) {
          a.kind = Arg::Kind::Node;
          a.node = it->second;
          a.port = e.port < 0 ? 0 : static_cast<std::uint32_t>(e.port);
        } else {
          if (!e.quoted && !std::islower(static_cast<unsigned char>(e.name[0])))
            fail(e.pos, "unknown name '" + e.name + "': leaves are lower-case names, pattern nodes are bound with `" +
                            e.name + " = Op(...)`");
          if (e.port >= 0)
            fail(e.pos, "'" + e.name + "' is a leaf (it binds a whole value); `" + e.name + ":" +
                            std::to_string(e.port) + "` needs a pattern node bound to '" + e.name + "'");
          a.kind = Arg::Kind::Leaf;
          a.leaf = e.name;
        }
        args_[n].push_back(a);
      }
    }
  }

  // Cycles, reachability from the root, and the depth (longest root-to-node chain).
  void check_shape() {
    std::vector<int> state(nodes_.size(), 0);  // 0 new, 1 on stack, 2 done
    std::vector<int> height(nodes_.size(), 0);
    std::function<void(int)> dfs = [&](int n) {
      state[n] = 1;
      for (const Arg& a : args_[n]) {
        if (a.kind != Arg::Kind::Node) continue;
        if (state[a.node] == 1)
          fail(a.pos, "the pattern has a cycle through '" + nodes_[a.node].name + "'");
        if (state[a.node] == 0) dfs(a.node);
        height[n] = std::max(height[n], height[a.node] + 1);
      }
      state[n] = 2;
    };
    dfs(root_);
    for (std::size_t n = 0; n < nodes_.size(); ++n)
      if (state[n] == 0)
        fail(nodes_[n].pos, "pattern node '" + nodes_[n].name +
                                "' is not reachable from the root (the last statement)");
    out_.depth = height[root_];
  }

  std::vector<OpType> op_set(const dsl::Call& call) {
    std::vector<OpType> ops;
    for (const std::string& s : call.ops) {
      if (s == "*") return {};
      ops.push_back(OpType::intern(s));
    }
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    return ops;
  }

  void emit(Opcode op, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t aux, dsl::Pos pos) {
    out_.program.code.push_back(Instr{op, a, b, c, aux, pos});
  }

  static Cmp cmp_of(const std::string& op) {
    if (op == "==") return Cmp::Eq;
    if (op == "!=") return Cmp::Ne;
    if (op == "<") return Cmp::Lt;
    if (op == "<=") return Cmp::Le;
    if (op == ">") return Cmp::Gt;
    if (op == ">=") return Cmp::Ge;
    return Cmp::In;
  }

  // Literal constraints are checked right after the node is bound (fail early);
  // cross-node ones are deferred until every node register is bound.
  void emit_node_checks(int n, std::uint32_t reg) {
    const dsl::Call& call = *nodes_[n].call;
    std::vector<OpType> ops = op_set(call);
    if (reg == 0) out_.root_ops = ops;
    if (!ops.empty()) {
      out_.program.op_sets.push_back(ops);
      emit(Opcode::CheckOp, reg, 0, 0, static_cast<std::uint32_t>(out_.program.op_sets.size() - 1), call.pos);
    }
    emit(Opcode::CheckArity, reg, static_cast<std::uint32_t>(call.args.size()), 0, 0, call.pos);
    for (const dsl::AttrItem& it : call.attrs) {
      match::AttrCheck chk;
      chk.node = reg;
      chk.key = it.key;
      switch (it.kind) {
        case dsl::AttrItem::Kind::Spread:
          fail(it.pos, "`..." + it.key + "` copies attributes in a rewrite; it has no meaning in a pattern");
        case dsl::AttrItem::Kind::Absent:
          chk.cmp = Cmp::Absent;
          break;
        case dsl::AttrItem::Kind::Assign:
        case dsl::AttrItem::Kind::Constraint:
          chk.cmp = it.kind == dsl::AttrItem::Kind::Assign ? Cmp::Eq : cmp_of(it.op);
          if (auto* lit = std::get_if<dsl::Literal>(&it.value.value)) {
            chk.literal = literal_to_attr(*lit, o_);
            if (chk.cmp == Cmp::In && !std::holds_alternative<std::vector<std::int64_t>>(chk.literal) &&
                !std::holds_alternative<std::vector<float>>(chk.literal) &&
                !std::holds_alternative<std::vector<std::string>>(chk.literal) &&
                !std::holds_alternative<std::vector<bool>>(chk.literal))
              fail(it.value.pos, "`in` needs a list on its right side");
          } else if (auto* ref = std::get_if<dsl::AttrRef>(&it.value.value)) {
            auto b = bound_.find(ref->node);
            if (b == bound_.end()) fail(ref->pos, "unknown pattern node '" + ref->node + "'");
            if (ref->attr == "op_type") fail(ref->pos, "comparing op types is not supported yet");
            deferred_.push_back({chk, b->second, ref->attr, it.pos});
            continue;
          } else {
            fail(it.value.pos, "this kind of constraint value is not supported yet (use a literal or node.attr)");
          }
          break;
      }
      out_.program.attr_checks.push_back(std::move(chk));
      emit(Opcode::CheckAttr, reg, 0, 0, static_cast<std::uint32_t>(out_.program.attr_checks.size() - 1), it.pos);
    }
  }

  void emit() {
    match::MatchProgram& p = out_.program;
    std::vector<int> reg(nodes_.size(), -1);
    std::map<std::string, std::uint32_t> leaf_reg;
    auto bind_node = [&](int n) {
      reg[n] = static_cast<int>(p.node_names.size());
      p.node_names.push_back(nodes_[n].name);
      p.node_pos.push_back(nodes_[n].pos);
      p.internal_uses.push_back(0);
      if (!nodes_[n].name.empty())
        out_.names[nodes_[n].name] = PatternName{PatternName::Kind::Node, static_cast<std::uint32_t>(reg[n]), nodes_[n].pos};
      emit_node_checks(n, static_cast<std::uint32_t>(reg[n]));
    };
    bind_node(root_);
    // Breadth first from the root: each node's inputs are loaded together, and a newly
    // reached producer's op is checked immediately, so most candidates fail early.
    std::vector<int> queue{root_};
    for (std::size_t head = 0; head < queue.size(); ++head) {
      int n = queue[head];
      auto nreg = static_cast<std::uint32_t>(reg[n]);
      for (std::size_t k = 0; k < args_[n].size(); ++k) {
        const Arg& a = args_[n][k];
        if (a.kind == Arg::Kind::Wildcard) continue;
        std::uint32_t v = p.num_value_regs++;
        emit(Opcode::LoadInput, nreg, static_cast<std::uint32_t>(k), v, 0, a.pos);
        if (a.kind == Arg::Kind::Leaf) {
          auto [it, fresh] = leaf_reg.emplace(a.leaf, v);
          if (fresh) {
            p.leaf_regs.push_back(v);
            out_.names[a.leaf] = PatternName{PatternName::Kind::Leaf, v, a.pos};
          } else {
            emit(Opcode::SameValue, it->second, v, 0, 0, a.pos);
          }
          continue;
        }
        if (reg[a.node] < 0) {
          std::uint32_t next = static_cast<std::uint32_t>(p.node_names.size());
          emit(Opcode::Producer, v, a.port, next, 0, a.pos);
          bind_node(a.node);
          queue.push_back(a.node);
        } else {
          emit(Opcode::ValueIs, v, static_cast<std::uint32_t>(reg[a.node]), a.port, 0, a.pos);
        }
        ++p.internal_uses[static_cast<std::size_t>(reg[a.node])];
      }
    }
    p.num_node_regs = static_cast<std::uint32_t>(p.node_names.size());
    for (Deferred& d : deferred_) {
      d.check.other_node = reg[d.other];
      d.check.other_key = d.other_key;
      p.attr_checks.push_back(std::move(d.check));
      emit(Opcode::CheckAttr, p.attr_checks.back().node, 0, 0, static_cast<std::uint32_t>(p.attr_checks.size() - 1), d.pos);
    }
    emit(Opcode::Accept, 0, 0, 0, 0, nodes_[root_].pos);
  }

  struct Deferred {
    match::AttrCheck check;
    int other;
    std::string other_key;
    dsl::Pos pos;
  };

  const dsl::TextOrigin& o_;
  std::vector<PNode> nodes_;
  std::vector<std::vector<Arg>> args_;
  std::map<std::string, int> bound_;
  std::vector<Deferred> deferred_;
  int root_ = -1;
  CompiledPattern out_;
};

}  // namespace

CompiledPattern compile_pattern(const dsl::Program& pattern, const dsl::TextOrigin& origin) {
  return PatternCompiler(origin).run(pattern);
}

}  // namespace graphfuse::rules
