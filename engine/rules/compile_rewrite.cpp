// Rewrite-template compiler: names resolved against the pattern, checked once per rule.
#include <algorithm>
#include <cctype>
#include <set>

#include "rules/compile.h"

namespace graphfuse::rules {

namespace {

using match::RwAttr;
using match::RwInput;
using match::RwNode;

class RewriteCompiler {
 public:
  RewriteCompiler(const CompiledPattern& pat, const dsl::TextOrigin& o) : pat_(pat), o_(o) {}

  match::RewriteProgram run(const dsl::Program& prog) {
    if (prog.statements.empty()) fail({1, 1}, "empty rewrite: write the replacement, e.g. `Op(x)` or a name");
    for (std::size_t i = 0; i < prog.statements.size(); ++i) {
      const dsl::Statement& st = prog.statements[i];
      bool last = i + 1 == prog.statements.size();
      using K = dsl::Statement::Kind;
      if (st.kind == K::Input || st.kind == K::Output)
        fail(st.pos, "`input` and `output` belong in graph files, not in rewrites");
      if (st.values.size() != 1) fail(st.pos, "several replacements are not supported yet");
      const dsl::Expr& v = st.values[0];
      if (st.kind == K::Bind) {
        if (st.targets.size() != 1) fail(st.pos, "multi-output bindings are not supported yet");
        const dsl::Expr& t = st.targets[0];
        if (t.kind != dsl::Expr::Kind::Name || t.port >= 0 || t.variadic || t.name == "_")
          fail(t.pos, "a binding target must be a plain name");
        if (pat_.names.count(t.name))
          fail(t.pos, "'" + t.name + "' is already bound by the pattern; choose another name");
        if (bound_.count(t.name)) fail(t.pos, "'" + t.name + "' is bound twice in the rewrite");
        if (v.kind != dsl::Expr::Kind::Call)
          fail(v.pos, "a rewrite binding must be a call: `" + t.name + " = Op(...)`");
        std::uint32_t n = add_call(*v.call, t.name);
        bound_[t.name] = n;
        continue;
      }
      if (!last) fail(st.pos, "only the last statement (the replacement) may be unbound; bind this call with `name = ...`");
      if (v.kind == dsl::Expr::Kind::Call) {
        add_call(*v.call, "");
      } else if (v.kind == dsl::Expr::Kind::Name) {
        RwInput in = resolve(v);
        if (in.kind == RwInput::Kind::New)
          fail(v.pos, "write the call of '" + v.name + "' as the last statement instead of naming it");
        out_.erase = true;
        out_.erase_to = in;
      } else {
        fail(v.pos, "the replacement must be a call or a bound name");
      }
    }
    if (!out_.erase && out_.nodes.empty()) fail({1, 1}, "the rewrite creates nothing");
    for (const auto& [name, idx] : bound_)
      if (!used_.count(name))
        fail(out_.nodes[idx].pos, "'" + name + "' is created but never used by the replacement");
    std::sort(out_.reads.begin(), out_.reads.end());
    out_.reads.erase(std::unique(out_.reads.begin(), out_.reads.end()), out_.reads.end());
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(dsl::Pos p, const std::string& msg) const { throw o_.error(p, msg); }

  // The node register of a pattern node name, or an error at pos.
  std::uint32_t pattern_node(const std::string& name, dsl::Pos pos, const char* what) {
    auto it = pat_.names.find(name);
    if (it == pat_.names.end()) {
      if (bound_.count(name)) fail(pos, std::string(what) + " needs a matched pattern node; '" + name + "' is created by the rewrite");
      fail(pos, "unknown name '" + name + "' in rewrite (not bound by the pattern)");
    }
    if (it->second.kind != PatternName::Kind::Node)
      fail(pos, std::string(what) + " needs a pattern node; '" + name + "' is a leaf (a value)");
    return it->second.reg;  // the root too: its attributes are read before it is replaced
  }

  RwInput resolve(const dsl::Expr& e) {
    if (e.variadic) fail(e.pos, "variadic operands (`" + e.name + "...`) are not supported yet");
    if (e.name == "_" && !e.quoted) fail(e.pos, "`_` matches anything in a pattern; a rewrite must name its inputs");
    // Multi-output nodes arrive with issue 4; until then every value is output 0, which
    // the matched and created nodes are guaranteed to have.
    if (e.port > 0) fail(e.pos, "reading output " + std::to_string(e.port) + " of a node is not supported yet");
    std::uint32_t port = 0;
    if (auto it = bound_.find(e.name); it != bound_.end()) {
      used_.insert(e.name);
      return RwInput{RwInput::Kind::New, it->second, port};
    }
    auto it = pat_.names.find(e.name);
    if (it == pat_.names.end()) fail(e.pos, "unknown name '" + e.name + "' in rewrite (not bound by the pattern)");
    if (it->second.kind == PatternName::Kind::Leaf) {
      if (e.port >= 0) fail(e.pos, "'" + e.name + "' is a leaf (a value) and has no outputs to pick");
      return RwInput{RwInput::Kind::Value, it->second.reg, 0};
    }
    if (it->second.reg == 0)
      fail(e.pos, "the rewrite cannot read the root '" + e.name + "': the replacement takes the root's place");
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

  std::uint32_t add_call(const dsl::Call& call, std::string name) {
    if (call.ops.size() != 1) fail(call.pos, "a rewrite creates one op; alternatives (`A|B`) belong in patterns");
    if (call.ops[0] == "*") fail(call.pos, "a rewrite must name the op it creates, not `*`");
    RwNode node;
    node.op = OpType::intern(call.ops[0]);
    node.pos = call.pos;
    for (const dsl::Expr& a : call.args) {
      if (a.kind == dsl::Expr::Kind::Call) {
        std::uint32_t child = add_call(*a.call, "");
        node.inputs.push_back(RwInput{RwInput::Kind::New, child, 0});
      } else if (a.kind == dsl::Expr::Kind::Literal) {
        fail(a.pos, "constant operands in rewrites are not supported yet");
      } else {
        node.inputs.push_back(resolve(a));
      }
    }
    for (const dsl::AttrItem& it : call.attrs) node.attrs.push_back(attr(it));
    node.name = name.empty() ? fresh_name(call.ops[0]) : name;
    used_names_.insert(node.name);
    out_.nodes.push_back(std::move(node));
    return static_cast<std::uint32_t>(out_.nodes.size() - 1);
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
        a.kind = RwAttr::Kind::Copy;
        a.src_key = ref->attr;
        out_.reads.emplace_back(a.node, ref->attr);
      }
    } else {
      fail(it.value.pos, "an attribute value in a rewrite must be a literal or `node.attr`");
    }
    return a;
  }

  const CompiledPattern& pat_;
  const dsl::TextOrigin& o_;
  std::map<std::string, std::uint32_t> bound_;
  std::set<std::string> used_names_;
  std::set<std::string> used_;  // rewrite-bound names read by a later statement
  match::RewriteProgram out_;
};

}  // namespace

match::RewriteProgram compile_rewrite(const dsl::Program& rewrite, const CompiledPattern& pattern,
                                      const dsl::TextOrigin& origin) {
  return RewriteCompiler(pattern, origin).run(rewrite);
}

}  // namespace graphfuse::rules
