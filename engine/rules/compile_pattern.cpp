// Pattern compiler, front half: pattern nodes, name resolution, shape and schema checks.
#include <algorithm>
#include <cctype>
#include <functional>

#include "rules/pattern_compiler.h"
#include "rules/suggest.h"

namespace graphfuse::rules {

std::string PatternCompiler::at(dsl::Pos p) const {
  SourceLoc l = o_.map(p);
  return "line " + std::to_string(l.line) + ":" + std::to_string(l.column);
}

int PatternCompiler::add_node(const dsl::Call& call, std::vector<std::string> names, dsl::Pos pos) {
  int idx = static_cast<int>(nodes_.size());
  bool multi = names.size() > 1;
  nodes_.push_back(PNode{&call, std::move(names), pos, {}, multi});
  std::vector<int> child;
  for (const dsl::Expr& e : call.args) {
    // An each's call (`Transpose(xs)...`) describes the elements; it is no pattern node.
    if (e.kind == dsl::Expr::Kind::Call && !e.variadic) child.push_back(add_node(*e.call, {}, e.pos));
    else child.push_back(-1);
  }
  nodes_[idx].child = std::move(child);
  return idx;
}

void PatternCompiler::collect(const dsl::Program& prog) {
  if (prog.statements.empty()) fail({1, 1}, "empty pattern: the last statement must be the root call");
  for (std::size_t i = 0; i < prog.statements.size(); ++i) {
    const dsl::Statement& st = prog.statements[i];
    bool last = i + 1 == prog.statements.size();
    using K = dsl::Statement::Kind;
    if (st.kind == K::Input || st.kind == K::Output)
      fail(st.pos, "`input` and `output` belong in graph files, not in patterns");
    if (st.kind != K::Bind) {
      if (!last) fail(st.pos, "only the last statement (the root) may be unbound; bind this call with `name = ...`");
      collect_roots(st);
      continue;
    }
    const dsl::Expr& v = st.values[0];
    std::vector<std::string> names;
    for (const dsl::Expr& t : st.targets) {
      if (t.kind != dsl::Expr::Kind::Name || t.port >= 0 || t.variadic)
        fail(t.pos, "a binding target must be a plain name");
      bool wildcard = t.name == "_" && !t.quoted;
      if (wildcard && st.targets.size() == 1) fail(t.pos, "a binding target must be a plain name");
      if (!wildcard) {
        if (auto it = bound_.find(t.name); it != bound_.end())
          fail(t.pos, "'" + t.name + "' is bound twice (first at " + at(nodes_[it->second.first].pos) + ")");
        for (const std::string& n : names)
          if (n == t.name) fail(t.pos, "'" + t.name + "' is bound twice in one binding");
      }
      names.push_back(wildcard ? "" : t.name);
    }
    if (v.kind != dsl::Expr::Kind::Call)
      fail(v.pos, "a pattern binding must be a call: `" + st.targets[0].name + " = Op(...)`");
    if (v.variadic)
      fail(v.pos, "an each `" + v.call->ops[0] + "(...)...` stands for the remaining inputs of a call; it is "
                  "written as that call's last input");
    int n = add_node(*v.call, names, st.targets[0].pos);
    for (std::uint32_t k = 0; k < names.size(); ++k)
      if (!names[k].empty()) bound_[names[k]] = {n, k};
    if (last) {
      roots_.push_back(n);
      root_outputs_.push_back(static_cast<std::uint32_t>(names.size()));
    }
  }
}

// The last statement: one root call, or several roots (`c1, c2`, names bound above).
void PatternCompiler::collect_roots(const dsl::Statement& st) {
  for (const dsl::Expr& v : st.values) {
    if (v.kind == dsl::Expr::Kind::Call) {
      if (v.variadic)
        fail(v.pos, "an each `" + v.call->ops[0] + "(...)...` stands for the remaining inputs of a call; it is "
                    "written as that call's last input");
      roots_.push_back(add_node(*v.call, {}, v.pos));
      root_outputs_.push_back(1);
      continue;
    }
    if (v.kind != dsl::Expr::Kind::Name || v.port >= 0 || v.variadic)
      fail(v.pos, "the last statement of a pattern lists its roots: calls or names of pattern nodes");
    auto it = bound_.find(v.name);
    if (it == bound_.end()) fail(v.pos, "root '" + v.name + "' is not a pattern node bound above (`" + v.name + " = Op(...)`)");
    int n = it->second.first;
    if (std::find(roots_.begin(), roots_.end(), n) != roots_.end()) fail(v.pos, "'" + v.name + "' is listed as a root twice");
    roots_.push_back(n);
    root_outputs_.push_back(static_cast<std::uint32_t>(nodes_[n].names.size()));
  }
}

Arg PatternCompiler::resolve_arg(const dsl::Expr& e, int child, bool last) {
  Arg a;
  a.pos = e.pos;
  if (e.kind == dsl::Expr::Kind::Call && e.variadic) {
    if (!last) fail(e.pos, "an each `" + e.call->ops[0] + "(...)...` must be the last input");
    resolve_each(e, a);
    return a;
  }
  if (e.kind == dsl::Expr::Kind::Call) {
    a.kind = Arg::Kind::Node;
    a.node = child;
    return a;
  }
  if (e.kind == dsl::Expr::Kind::Literal) {
    a.kind = Arg::Kind::Literal;
    const auto& v = e.literal.value;
    if (auto* i = std::get_if<std::int64_t>(&v)) a.constant.value = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&v)) a.constant.value = *d;
    else if (auto* b = std::get_if<bool>(&v)) {
      a.constant.value = *b ? 1 : 0;
      a.constant.boolean = true;
    } else if (std::holds_alternative<dsl::TensorLiteral>(v)) {
      a.constant.has_tensor = true;
      a.constant.tensor = std::get<Tensor>(literal_to_attr(e.literal, o_));
      if (!a.constant.tensor.has_data()) fail(e.pos, "a tensor constant in a pattern needs its data");
    } else {
      fail(e.pos, "a constant in a pattern is a number (`Add(x, 1.0)`), true or false (`And(x, false)`) or a tensor literal");
    }
    return a;
  }
  bool wildcard = e.name == "_" && !e.quoted;
  if (e.variadic) {
    if (!last) fail(e.pos, "a variadic `" + e.name + "...` must be the last input");
    if (e.port >= 0) fail(e.pos, "a variadic list takes no output index");
    a.kind = Arg::Kind::Variadic;
    if (!wildcard) {
      if (bound_.count(e.name)) fail(e.pos, "'" + e.name + "' is a pattern node; a variadic list needs its own name");
      a.leaf = e.name;
    }
    return a;
  }
  if (wildcard) {
    if (e.port >= 0) fail(e.pos, "`_` takes no output index");
    return a;
  }
  if (auto it = bound_.find(e.name); it != bound_.end()) {
    a.kind = Arg::Kind::Node;
    a.node = it->second.first;
    a.port = it->second.second;
    if (e.port >= 0) {
      if (nodes_[a.node].multi)
        fail(e.pos, "'" + e.name + "' already names output " + std::to_string(a.port) +
                        "; write the name of the output you mean");
      a.port = static_cast<std::uint32_t>(e.port);
    }
    return a;
  }
  if (!e.quoted && !std::islower(static_cast<unsigned char>(e.name[0])))
    fail(e.pos, "unknown name '" + e.name + "': leaves are lower-case names, pattern nodes are bound with `" +
                    e.name + " = Op(...)`");
  if (e.port >= 0)
    fail(e.pos, "'" + e.name + "' is a leaf (it binds a whole value); `" + e.name + ":" + std::to_string(e.port) +
                    "` needs a pattern node bound to '" + e.name + "'");
  a.kind = Arg::Kind::Leaf;
  a.leaf = e.name;
  return a;
}

// `Op(a, _) {k = lit, k = t.attr}...`: every remaining input comes from its own Op node;
// each of its inputs is a name (a list of values, one per element) or `_`.
void PatternCompiler::resolve_each(const dsl::Expr& e, Arg& a) {
  const dsl::Call& call = *e.call;
  a.kind = Arg::Kind::Each;
  a.each = &call;
  for (const dsl::Expr& x : call.args) {
    if (x.kind != dsl::Expr::Kind::Name || x.variadic || x.port >= 0)
      fail(x.pos, "the inputs of an each `" + call.ops[0] +
                      "(...)...` are names (each a list: that input of every element) or `_`");
    bool wildcard = x.name == "_" && !x.quoted;
    if (!wildcard) {
      if (bound_.count(x.name))
        fail(x.pos, "'" + x.name + "' is a pattern node; an input of an each's elements binds a list of its own");
      if (!x.quoted && !std::islower(static_cast<unsigned char>(x.name[0])))
        fail(x.pos, "unknown name '" + x.name + "': the inputs of an each are lower-case list names or `_`");
    }
    a.each_lists.push_back(wildcard ? "" : x.name);
  }
  for (const dsl::AttrItem& it : call.attrs) {
    if (it.kind == dsl::AttrItem::Kind::Spread)
      fail(it.pos, "`..." + it.key + "` copies attributes in a rewrite; it has no meaning in a pattern");
    if (it.kind == dsl::AttrItem::Kind::Absent || std::holds_alternative<dsl::Literal>(it.value.value)) continue;
    const auto* ref = std::get_if<dsl::AttrRef>(&it.value.value);
    if (!ref || ref->attr == "op_type")
      fail(it.value.pos, "an each's attribute is compared with a literal or with an attribute of a pattern node "
                         "(`perm = t.perm`)");
    auto b = bound_.find(ref->node);
    if (b == bound_.end())
      fail(ref->pos, "'" + ref->node + "' is not a pattern node; an each's elements are compared with a pattern "
                     "node bound by name (`t = Transpose(x)`)");
  }
}

// The node's last argument takes the remaining inputs (a variadic list or an each).
bool PatternCompiler::ends_variadic(int n) const {
  return !args_[n].empty() && (args_[n].back().kind == Arg::Kind::Variadic || args_[n].back().kind == Arg::Kind::Each);
}

void PatternCompiler::resolve() {
  args_.resize(nodes_.size());
  std::map<std::string, dsl::Pos> variadic_names, leaf_names;
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const dsl::Call& call = *nodes_[n].call;
    for (std::size_t k = 0; k < call.args.size(); ++k) {
      Arg a = resolve_arg(call.args[k], nodes_[n].child[k], k + 1 == call.args.size());
      if (a.kind == Arg::Kind::Variadic && !a.leaf.empty()) {
        if (auto [it, fresh] = variadic_names.emplace(a.leaf, a.pos); !fresh)
          fail(a.pos, "variadic list '" + a.leaf + "' is bound twice (first at " + at(it->second) + ")");
      } else if (a.kind == Arg::Kind::Each) {
        for (std::size_t i = 0; i < a.each_lists.size(); ++i) {
          const std::string& name = a.each_lists[i];
          dsl::Pos pos = a.each->args[i].pos;
          if (!name.empty())
            if (auto [it, fresh] = variadic_names.emplace(name, pos); !fresh)
              fail(pos, "variadic list '" + name + "' is bound twice (first at " + at(it->second) + ")");
        }
      } else if (a.kind == Arg::Kind::Leaf) {
        leaf_names.emplace(a.leaf, a.pos);
      }
      args_[n].push_back(std::move(a));
    }
    if (commutative(static_cast<int>(n))) {
      if (ends_variadic(static_cast<int>(n)))
        fail(args_[n].back().pos, "a commutative op's inputs cannot be variadic");
      if (args_[n].size() > 4)
        fail(call.pos, "a commutative op with more than 4 inputs in a pattern (" + std::to_string(args_[n].size()) +
                           " operand orders to try is too many)");
    }
  }
  for (const auto& [name, pos] : variadic_names)
    if (leaf_names.count(name)) fail(pos, "'" + name + "' is used both as a leaf and as a variadic list");
}

// Cycles, reachability from the roots, and the heights (longest chain below a node).
void PatternCompiler::check_shape() {
  std::vector<int> state(nodes_.size(), 0);  // 0 new, 1 on stack, 2 done
  height_.assign(nodes_.size(), 0);
  std::function<void(int)> dfs = [&](int n) {
    state[n] = 1;
    for (const Arg& a : args_[n]) {
      if (a.kind == Arg::Kind::Each) height_[n] = std::max(height_[n], 1);  // the elements sit one level up
      if (a.kind != Arg::Kind::Node) continue;
      if (state[a.node] == 1) fail(a.pos, "the pattern has a cycle through '" + nodes_[a.node].label() + "'");
      if (state[a.node] == 0) dfs(a.node);
      height_[n] = std::max(height_[n], height_[a.node] + 1);
    }
    state[n] = 2;
  };
  for (int r : roots_)
    if (state[r] == 0) dfs(r);
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    if (state[n] == 0)
      fail(nodes_[n].pos, "pattern node '" + nodes_[n].label() + "' is not reachable from the root (the last statement)");
  check_roots(state);
}

// Roots are replaced, so nothing in the pattern may read them. A root after the first
// is found through a value the first root's part binds, and must be a single node over
// that part's values and leaves of its own. The incremental driver relies on this shape:
// when such a node changes (or its own leaf's producer is replaced, which rewires it), it
// looks again at the first roots within the rule's depth below the node's inputs
// (engine/rewrite/worklist.cpp), which is where every first root it could pair with is.
void PatternCompiler::check_roots(const std::vector<int>&) {
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    for (const Arg& a : args_[n])
      if (a.kind == Arg::Kind::Node && std::find(roots_.begin(), roots_.end(), a.node) != roots_.end())
        fail(a.pos, "'" + nodes_[a.node].label() + "' is a root (it is replaced), so the pattern cannot read it");
  if (roots_.size() == 1) return;
  std::vector<char> part0(nodes_.size(), 0);
  std::map<std::string, int> leaves0;
  std::function<void(int)> mark = [&](int n) {
    if (part0[n]) return;
    part0[n] = 1;
    for (const Arg& a : args_[n]) {
      if (a.kind == Arg::Kind::Node) mark(a.node);
      if (a.kind == Arg::Kind::Leaf) leaves0[a.leaf] = 1;
    }
  };
  mark(roots_[0]);
  for (std::size_t i = 1; i < roots_.size(); ++i) {
    int r = roots_[i];
    bool shared = false;
    for (const Arg& a : args_[r]) {
      if (a.kind == Arg::Kind::Node && !part0[a.node])
        fail(a.pos, "a root after the first must read only leaves and nodes of the first root's pattern; bind this "
                    "part under the first root");
      if (a.kind == Arg::Kind::Literal)
        fail(a.pos, "a root after the first cannot check constants; give the value a leaf name the first root's "
                    "pattern reads");
      shared |= (a.kind == Arg::Kind::Node) || (a.kind == Arg::Kind::Leaf && leaves0.count(a.leaf));
    }
    if (!shared)
      fail(nodes_[r].pos, "root '" + nodes_[r].label() + "' shares no value with the first root's pattern, so "
                          "nothing connects them");
  }
}

const OpSchema* PatternCompiler::schema(const std::string& op) const {
  if (!ops_) return nullptr;
  auto it = ops_->find(op);
  return it == ops_->end() ? nullptr : &it->second;
}

bool PatternCompiler::commutative(int n) const {
  const dsl::Call& c = *nodes_[n].call;
  int yes = 0;
  for (const std::string& op : c.ops) {
    const OpSchema* s = schema(op);
    yes += s && s->commutative;
  }
  if (yes > 0 && yes != static_cast<int>(c.ops.size()))
    fail(c.pos, "these alternatives mix commutative and non-commutative ops; split them into two rules");
  return yes > 0;
}

void PatternCompiler::check_schema() const {
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    bool variadic = ends_variadic(static_cast<int>(n));
    check_call_schema(*nodes_[n].call, static_cast<int>(args_[n].size()) - (variadic ? 1 : 0), variadic,
                      &nodes_[n]);
    if (variadic && args_[n].back().kind == Arg::Kind::Each) {
      const dsl::Call& el = *args_[n].back().each;
      check_call_schema(el, static_cast<int>(el.args.size()), false, nullptr);
    }
  }
}

// A call against the declared schemas of its ops: input count, outputs (`pn` multi-bound),
// attribute kinds of literal constraints.
void PatternCompiler::check_call_schema(const dsl::Call& c, int fixed, bool variadic, const PNode* pn) const {
  {
    for (const std::string& op : c.ops) {
      const OpSchema* s = schema(op);
      if (!s) continue;
      std::string where = " (declared at " + s->loc.str() + ")";
      if (s->min_inputs >= 0) {
        bool too_many = s->max_inputs >= 0 && fixed > s->max_inputs;
        bool too_few = !variadic && fixed < s->min_inputs;
        if (too_many || too_few) {
          std::string want = s->min_inputs == s->max_inputs ? std::to_string(s->min_inputs)
                             : s->max_inputs < 0 ? std::to_string(s->min_inputs) + " or more"
                                                 : std::to_string(s->min_inputs) + " to " + std::to_string(s->max_inputs);
          fail(c.pos, op + " takes " + want + " inputs" + where + ", not " + std::to_string(fixed));
        }
      }
      if (pn && pn->multi && s->outputs >= 0 && static_cast<int>(pn->names.size()) != s->outputs)
        fail(pn->pos, op + " has " + std::to_string(s->outputs) + " outputs" + where + ", not " +
                          std::to_string(pn->names.size()));
      for (const dsl::AttrItem& it : c.attrs) {
        if (it.kind == dsl::AttrItem::Kind::Spread) continue;
        if (std::string e = undeclared_attribute(*s, op, it.key); !e.empty()) fail(it.pos, e);
        auto k = s->attrs.find(it.key);
        const auto* lit = std::get_if<dsl::Literal>(&it.value.value);
        if (k == s->attrs.end() || !lit || it.kind == dsl::AttrItem::Kind::Absent) continue;
        std::string kind(attr_kind_name(literal_to_attr(*lit, o_)));
        if (it.kind == dsl::AttrItem::Kind::Constraint && it.op == "in" && kind.size() > 1 && kind.back() == 's')
          kind.pop_back();  // `k in [1, 2]` compares elements
        const auto* list = std::get_if<std::vector<dsl::Literal>>(&lit->value);
        bool ok = kind == k->second || (k->second == "float" && kind == "int") ||
                  (k->second == "floats" && kind == "ints") || (list && list->empty());
        if (!ok)
          fail(it.value.pos, "attribute '" + it.key + "' of " + op + " is " + k->second + where +
                                 "; this value is " + kind);
      }
    }
  }
}

CompiledPattern PatternCompiler::run(const dsl::Program& prog) {
  collect(prog);
  resolve();
  check_shape();
  check_schema();
  emit(false);  // assigns registers, so constraints can name them
  emit(true);
  return std::move(out_);
}

CompiledPattern compile_pattern(const dsl::Program& pattern, const dsl::TextOrigin& origin,
                                const std::vector<WhereItem>& where, const OpSchemas* ops) {
  return PatternCompiler(origin, where, ops).run(pattern);
}

}  // namespace graphfuse::rules
