// Rewrite-template compiler: names resolved against the pattern, checked once per rule.
#include <algorithm>
#include <cctype>
#include <set>

#include "rules/compile.h"
#include "rules/suggest.h"

namespace graphfuse::rules {

namespace {

using match::RwAttr;
using match::RwInput;
using match::RwNode;

class RewriteCompiler {
 public:
  RewriteCompiler(CompiledPattern& pat, const dsl::TextOrigin& o, const OpSchemas* ops)
      : pat_(pat), o_(o), ops_(ops) {}

  match::RewriteProgram run(const dsl::Program& prog) {
    if (prog.statements.empty()) fail({1, 1}, "empty rewrite: write the replacement, e.g. `Op(x)` or a name");
    for (std::size_t i = 0; i < prog.statements.size(); ++i) {
      const dsl::Statement& st = prog.statements[i];
      bool last = i + 1 == prog.statements.size();
      using K = dsl::Statement::Kind;
      if (st.kind == K::Input || st.kind == K::Output)
        fail(st.pos, "`input` and `output` belong in graph files, not in rewrites");
      if (st.kind == K::Bind) {
        bind(st, last);
        continue;
      }
      if (!last) fail(st.pos, "only the last statement (the replacement) may be unbound; bind this call with `name = ...`");
      for (const dsl::Expr& v : st.values) out_.replacements.push_back(replacement(v));
      last_pos_ = st.pos;
    }
    finish();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(dsl::Pos p, const std::string& msg) const { throw o_.error(p, msg); }

  const OpSchema* schema(const std::string& op) const {
    if (!ops_) return nullptr;
    auto it = ops_->find(op);
    return it == ops_->end() ? nullptr : &it->second;
  }

  // `Op(...)...` matches the inputs of a variadic op; a rewrite passes the lists it bound.
  void no_each(const dsl::Expr& e) const {
    if (e.kind == dsl::Expr::Kind::Call && e.variadic)
      fail(e.pos, "an each `" + e.call->ops[0] + "(...)...` belongs in patterns; a rewrite passes the lists it "
                  "bound (`Concat(xs...)`)");
  }

  void bind(const dsl::Statement& st, bool last) {
    const dsl::Expr& v = st.values[0];
    no_each(v);
    for (const dsl::Expr& t : st.targets) {
      // `a, _ = Split(x)`: an output nobody reads (not on the last line: that one lists
      // the replacements, and every one of them must be named).
      bool unused = t.name == "_" && !t.quoted && st.targets.size() > 1 && !last;
      if (t.kind != dsl::Expr::Kind::Name || t.port >= 0 || t.variadic || (t.name == "_" && !t.quoted && !unused))
        fail(t.pos, "a binding target must be a plain name");
      if (unused) continue;
      if (pat_.names.count(t.name)) fail(t.pos, "'" + t.name + "' is already bound by the pattern; choose another name");
      if (bound_.count(t.name)) fail(t.pos, "'" + t.name + "' is bound twice in the rewrite");
    }
    if (v.kind != dsl::Expr::Kind::Call)
      fail(v.pos, "a rewrite binding must be a call: `" + st.targets[0].name + " = Op(...)`");
    auto outputs = static_cast<std::uint32_t>(st.targets.size());
    std::uint32_t n = add_call(*v.call, st.targets[0].name, outputs);
    for (std::uint32_t k = 0; k < outputs; ++k) {
      if (st.targets[k].name == "_" && !st.targets[k].quoted) continue;
      bound_[st.targets[k].name] = {n, k};
      if (last) {
        used_.insert(st.targets[k].name);
        out_.replacements.push_back(RwInput{RwInput::Kind::New, n, k});
      }
    }
    if (last) last_pos_ = st.pos;
  }

  RwInput replacement(const dsl::Expr& v) {
    no_each(v);
    if (v.kind == dsl::Expr::Kind::Call) return RwInput{RwInput::Kind::New, add_call(*v.call, "", 1), 0};
    if (v.kind == dsl::Expr::Kind::Literal) return RwInput{RwInput::Kind::New, add_const(v), 0};
    if (v.variadic) fail(v.pos, "a variadic list can only be the inputs of a call (`Concat(" + v.name + "...)`)");
    return resolve(v);
  }

  // Replacement count, takeovers, and the checks rewrite values need at match time.
  void finish() {
    const match::MatchProgram& p = pat_.program;
    std::size_t want = 0;
    for (std::uint32_t k : p.root_outputs) want += k;
    if (out_.replacements.size() != want) {
      std::string roots;
      for (std::uint32_t r : p.roots) roots += (roots.empty() ? "" : ", ") + (p.node_names[r].empty() ? "the root" : p.node_names[r]);
      fail(last_pos_, "the pattern's roots (" + roots + ") have " + std::to_string(want) +
                          " output" + (want == 1 ? "" : "s") + " to replace; the rewrite's last line gives " +
                          std::to_string(out_.replacements.size()));
    }
    for (const auto& [name, where] : bound_)
      if (!used_.count(name))
        fail(out_.nodes[where.first].pos, "'" + name + "' is created but never used by the replacement");
    // A root whose outputs are exactly one new node's outputs, in order, is taken over by
    // that node (same NodeId, id and output names); other roots are rewired and removed.
    std::size_t off = 0;
    for (std::size_t i = 0; i < p.roots.size(); ++i) {
      std::uint32_t k = p.root_outputs[i];
      const RwInput& first = out_.replacements[off];
      bool takeover = first.kind == RwInput::Kind::New && out_.nodes[first.index].num_outputs == k &&
                      out_.nodes[first.index].takeover < 0;
      for (std::uint32_t j = 0; j < k && takeover; ++j) {
        const RwInput& r = out_.replacements[off + j];
        takeover = r.kind == RwInput::Kind::New && r.index == first.index && r.port == j;
      }
      if (takeover) out_.nodes[first.index].takeover = static_cast<std::int32_t>(i);
      off += k;
    }
    if (p.roots.size() == 1 && p.root_outputs[0] == 1 && out_.replacements[0].kind != RwInput::Kind::New) {
      out_.erase = true;
      out_.erase_to = out_.replacements[0];
    }
    std::sort(out_.reads.begin(), out_.reads.end());
    out_.reads.erase(std::unique(out_.reads.begin(), out_.reads.end()), out_.reads.end());
    // Computed values are checked at match time (before Accept), so a candidate whose
    // rewrite could not be built is simply not a match.
    match::MatchProgram& mp = pat_.program;
    for (const RwNode& n : out_.nodes)
      for (const RwAttr& a : n.attrs) {
        if (a.kind != RwAttr::Kind::Computed) continue;
        std::vector<std::uint32_t> nodes, values;
        term_registers(a.term, mp, nodes, values);
        if (!values.empty() || a.term.fn == match::Fn::Native) pat_.depth = std::max(pat_.depth, pat_.leaf_depth);
        match::ExprCheck c;
        c.mode = match::ExprCheck::Mode::Defined;
        c.lhs = a.term;
        c.loc = o_.map(a.term.pos);
        c.text = o_.line_at(a.term.pos);
        c.text.erase(0, c.text.find_first_not_of(" \t"));
        mp.exprs.push_back(std::move(c));
        mp.code.insert(mp.code.end() - 1, match::Instr{match::Opcode::CheckExpr, 0, 0, 0,
                                                       static_cast<std::uint32_t>(mp.exprs.size() - 1), a.term.pos});
      }
    for (std::uint32_t v : pat_.program.leaf_regs)
      if (pat_.program.value_names[v].empty()) out_.folded.push_back(v);  // a pattern literal
    for (const match::ExprCheck& c : pat_.program.exprs) {  // where-constraints and rewrite values
      fold(c.lhs);
      fold(c.rhs);
    }
    std::sort(out_.folded.begin(), out_.folded.end());
    out_.folded.erase(std::unique(out_.folded.begin(), out_.folded.end()), out_.folded.end());
  }

  // Leaves whose constant values a computed attribute reads (value(c), values(c), slice(c, ...), join(axis, a, b, c)).
  void fold(const match::Term& t) {
    bool reads_value = t.kind == match::Term::Kind::Func && (t.fn == match::Fn::Value || t.fn == match::Fn::Values || t.fn == match::Fn::Slice ||
                                                                  t.fn == match::Fn::Join);
    for (const match::Term& a : t.args) {
      if (reads_value && a.kind == match::Term::Kind::Value && !a.of_node) out_.folded.push_back(a.reg);
      fold(a);
    }
  }

  // The node register of a pattern node name, or an error at pos.
  std::uint32_t pattern_node(const std::string& name, dsl::Pos pos, const char* what) {
    auto it = pat_.names.find(name);
    if (it == pat_.names.end()) {
      if (bound_.count(name)) fail(pos, std::string(what) + " needs a matched pattern node; '" + name + "' is created by the rewrite");
      fail(pos, "unknown name '" + name + "' in rewrite (not bound by the pattern)");
    }
    if (it->second.kind != PatternName::Kind::Node)
      fail(pos, std::string(what) + " needs a pattern node; '" + name + "' is a " +
                    (it->second.kind == PatternName::Kind::Leaf ? "leaf (a value)" : "variadic list"));
    return it->second.reg;  // roots too: their attributes are read before they are replaced
  }

  bool is_root(std::uint32_t reg) const {
    const auto& r = pat_.program.roots;
    return std::find(r.begin(), r.end(), reg) != r.end();
  }

  RwInput resolve(const dsl::Expr& e) {
    if (e.name == "_" && !e.quoted)
      fail(e.pos, "`_` matches anything in a pattern; in a rewrite it only stands for an absent input of a call "
                  "(`FusedConv(x, w, _, z)`)");
    if (auto it = bound_.find(e.name); it != bound_.end()) {
      used_.insert(e.name);
      auto [n, port] = it->second;
      if (e.port >= 0) port = static_cast<std::uint32_t>(e.port);
      if (port >= out_.nodes[n].num_outputs)
        fail(e.pos, "'" + e.name + "' has " + std::to_string(out_.nodes[n].num_outputs) + " output" +
                        (out_.nodes[n].num_outputs == 1 ? "" : "s") + "; there is no output " + std::to_string(port));
      return RwInput{RwInput::Kind::New, n, port};
    }
    auto it = pat_.names.find(e.name);
    if (it == pat_.names.end()) fail(e.pos, "unknown name '" + e.name + "' in rewrite (not bound by the pattern)");
    switch (it->second.kind) {
      case PatternName::Kind::Leaf:
        if (e.port >= 0) fail(e.pos, "'" + e.name + "' is a leaf (a value) and has no outputs to pick");
        return RwInput{RwInput::Kind::Value, it->second.reg, 0};
      case PatternName::Kind::Variadic:
        fail(e.pos, "'" + e.name + "' is a variadic list; write `" + e.name + "...` to pass its values");
      case PatternName::Kind::Node:
        break;
    }
    if (is_root(it->second.reg))
      fail(e.pos, "the rewrite cannot read the root '" + e.name + "': the replacement takes the root's place");
    std::uint32_t port = e.port >= 0 ? static_cast<std::uint32_t>(e.port) : it->second.port;
    return RwInput{RwInput::Kind::NodeOut, it->second.reg, port};
  }

  std::string fresh_name(const std::string& op) {
    std::string base;
    std::string_view local = op;
    if (auto dot = local.rfind('.'); dot != std::string_view::npos) local = local.substr(dot + 1);
    for (char c : local) base += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string name = base;
    for (int k = 2; used_names_.count(name) || pat_.names.count(name) || bound_.count(name); ++k)
      name = base + "_" + std::to_string(k);
    return name;
  }

  // A literal input becomes a new Const node holding it.
  std::uint32_t add_const(const dsl::Expr& e) {
    RwNode node;
    node.op = OpType::intern(ops::kConst);
    node.pos = e.pos;
    RwAttr a;
    a.key = "value";
    a.literal = literal_to_tensor(e.literal, o_);
    node.attrs.push_back(std::move(a));
    node.name = fresh_name("const");
    used_names_.insert(node.name);
    out_.nodes.push_back(std::move(node));
    return static_cast<std::uint32_t>(out_.nodes.size() - 1);
  }

  std::uint32_t add_call(const dsl::Call& call, std::string name, std::uint32_t outputs) {
    if (call.ops.size() != 1) fail(call.pos, "a rewrite creates one op; alternatives (`A|B`) belong in patterns");
    if (call.ops[0] == "*") fail(call.pos, "a rewrite must name the op it creates, not `*`");
    RwNode node;
    // `u.op_type(...)`: the op pattern node u matched (one rule for Relu|Sigmoid|...).
    constexpr std::string_view kOpTypeSuffix = ".op_type";
    const std::string& op = call.ops[0];
    const bool op_of = op.size() > kOpTypeSuffix.size() && op.ends_with(kOpTypeSuffix);
    if (op_of) {
      std::string who = op.substr(0, op.size() - kOpTypeSuffix.size());
      if (who.find('.') != std::string::npos)
        fail(call.pos, "`" + op + "`: `NAME.op_type(...)` takes the op of pattern node NAME; '" + who +
                           "' is not a name");
      node.op_of = static_cast<std::int32_t>(pattern_node(who, call.pos, "`NAME.op_type(...)`"));
    } else {
      node.op = OpType::intern(op);
    }
    node.pos = call.pos;
    node.num_outputs = outputs;
    bool variadic = false;
    for (const dsl::Expr& a : call.args) {
      no_each(a);
      if (a.kind == dsl::Expr::Kind::Call) {
        node.inputs.push_back(RwInput{RwInput::Kind::New, add_call(*a.call, "", 1), 0});
      } else if (a.kind == dsl::Expr::Kind::Literal) {
        node.inputs.push_back(RwInput{RwInput::Kind::New, add_const(a), 0});
      } else if (a.name == "_" && !a.quoted && !a.variadic) {
        if (a.port >= 0) fail(a.pos, "`_` takes no output index");
        node.inputs.push_back(RwInput{RwInput::Kind::Absent, 0, 0});
      } else if (a.variadic) {
        auto it = pat_.names.find(a.name);
        if (it == pat_.names.end() || it->second.kind != PatternName::Kind::Variadic)
          fail(a.pos, "'" + a.name + "...' needs a variadic list bound by the pattern (`Op(" + a.name + "...)`)");
        node.inputs.push_back(RwInput{RwInput::Kind::Variadic, it->second.reg, 0});
        variadic = true;
      } else {
        node.inputs.push_back(resolve(a));
      }
    }
    for (const dsl::AttrItem& it : call.attrs) node.attrs.push_back(attr(it));
    if (!op_of) check_schema(call, node, variadic);
    node.name = name.empty() ? fresh_name(op_of ? op.substr(0, op.size() - kOpTypeSuffix.size()) : op) : name;
    used_names_.insert(node.name);
    out_.nodes.push_back(std::move(node));
    return static_cast<std::uint32_t>(out_.nodes.size() - 1);
  }

  void check_schema(const dsl::Call& call, const RwNode& node, bool variadic) const {
    const OpSchema* s = schema(call.ops[0]);
    if (!s) return;
    std::string where = " (declared at " + s->loc.str() + ")";
    int n = static_cast<int>(node.inputs.size());
    if (!variadic && s->min_inputs >= 0 && (n < s->min_inputs || (s->max_inputs >= 0 && n > s->max_inputs)))
      fail(call.pos, call.ops[0] + " takes " +
                         (s->min_inputs == s->max_inputs ? std::to_string(s->min_inputs)
                                                         : std::to_string(s->min_inputs) + " or more") +
                         " inputs" + where + ", not " + std::to_string(n));
    if (s->outputs >= 0 && node.num_outputs > 1 && static_cast<int>(node.num_outputs) != s->outputs)
      fail(call.pos, call.ops[0] + " has " + std::to_string(s->outputs) + " outputs" + where + ", not " +
                         std::to_string(node.num_outputs));
    for (std::size_t i = 0; i < node.attrs.size(); ++i) {
      const RwAttr& a = node.attrs[i];
      if (a.kind != RwAttr::Kind::Spread)
        if (std::string e = undeclared_attribute(*s, call.ops[0], a.key); !e.empty()) fail(call.attrs[i].pos, e);
      auto k = s->attrs.find(a.key);
      if (a.kind != RwAttr::Kind::Literal || k == s->attrs.end()) continue;
      std::string kind(attr_kind_name(a.literal));
      if (kind == k->second || (k->second == "float" && kind == "int") || (k->second == "floats" && kind == "ints"))
        continue;
      fail(call.attrs[i].value.pos, "attribute '" + a.key + "' of " + call.ops[0] + " is " + k->second +
                                        where + "; this value is " + kind);
    }
  }

  RwAttr attr(const dsl::AttrItem& it) {
    RwAttr a;
    a.key = it.key;
    switch (it.kind) {
      case dsl::AttrItem::Kind::Spread:
        a.kind = RwAttr::Kind::Spread;
        a.node = pattern_node(it.key, it.pos, "`...` spread");
        return a;
      case dsl::AttrItem::Kind::Constraint:
      case dsl::AttrItem::Kind::Absent:
        fail(it.pos, "constraints belong in patterns; a rewrite sets attributes with `key = value`");
      case dsl::AttrItem::Kind::Assign:
        break;
    }
    if (auto* lit = std::get_if<dsl::Literal>(&it.value.value)) {
      a.kind = RwAttr::Kind::Literal;
      a.literal = literal_to_attr(*lit, o_);
    } else if (auto* ref = std::get_if<dsl::AttrRef>(&it.value.value)) {
      a.node = pattern_node(ref->node, ref->pos, "reading an attribute");
      if (ref->attr == "op_type") {
        a.kind = RwAttr::Kind::OpTypeOf;
      } else {
        TermCompiler(pat_.names, o_, ops_).check_attr_declared(pat_.names.at(ref->node), ref->attr, ref->pos);
        a.kind = RwAttr::Kind::Copy;
        a.src_key = ref->attr;
        out_.reads.emplace_back(a.node, ref->attr);
      }
    } else {
      a.kind = RwAttr::Kind::Computed;
      a.term = TermCompiler(pat_.names, o_, ops_).term(it.value);
    }
    return a;
  }

  CompiledPattern& pat_;
  const dsl::TextOrigin& o_;
  const OpSchemas* ops_;
  std::map<std::string, std::pair<std::uint32_t, std::uint32_t>> bound_;  // name -> (node, port)
  std::set<std::string> used_names_;
  std::set<std::string> used_;  // rewrite-bound names read by a later statement
  dsl::Pos last_pos_;
  match::RewriteProgram out_;
};

}  // namespace

match::RewriteProgram compile_rewrite(const dsl::Program& rewrite, CompiledPattern& pattern,
                                      const dsl::TextOrigin& origin, const OpSchemas* ops) {
  return RewriteCompiler(pattern, origin, ops).run(rewrite);
}

}  // namespace graphfuse::rules
