// Constraint and rewrite-value operands -> Terms: name resolution, builtins, natives.
#include <algorithm>

#include "graphfuse/rules.h"
#include "rules/compile.h"
#include "rules/suggest.h"

namespace graphfuse::rules {

namespace {

using match::Fn;
using match::Term;

enum class ArgKind { Value, AttrRef, Any, ValueOrList };

struct Builtin {
  const char* name;
  Fn fn;
  std::vector<ArgKind> args;
  std::size_t optional = 0;  ///< how many trailing arguments may be left out
};

const std::vector<Builtin>& builtins() {
  static const std::vector<Builtin> b = {
      {"const", Fn::Const, {ArgKind::Value}},
      {"has", Fn::Has, {ArgKind::AttrRef}},
      {"absent", Fn::Absent, {ArgKind::AttrRef}},
      {"rank", Fn::Rank, {ArgKind::Value}},
      {"dtype", Fn::DType, {ArgKind::Value}},
      {"shape", Fn::Shape, {ArgKind::Value}},
      {"dim", Fn::Dim, {ArgKind::Value, ArgKind::Any}},
      {"value", Fn::Value, {ArgKind::Value}},
      {"values", Fn::Values, {ArgKind::Value}},
      {"len", Fn::Len, {ArgKind::ValueOrList}},
      {"compose", Fn::Compose, {ArgKind::Any, ArgKind::Any}},
      {"range", Fn::Range, {ArgKind::Any}},
      {"contains", Fn::Contains, {ArgKind::Any, ArgKind::Any}},
      {"uses", Fn::Uses, {ArgKind::Value}},
      {"as_tensor", Fn::AsTensor, {ArgKind::Any}},
      {"default", Fn::Default, {ArgKind::Any, ArgKind::Any}},
      {"opset", Fn::Opset, {ArgKind::Any}},
      {"same_shape", Fn::SameShape, {ArgKind::Value, ArgKind::Value}},
      {"inverse", Fn::Inverse, {ArgKind::Any}},
      {"at", Fn::At, {ArgKind::Any, ArgKind::Any}},
      {"concat", Fn::Concat, {ArgKind::Any, ArgKind::Any}},
      {"repeat", Fn::Repeat, {ArgKind::Any, ArgKind::Any}},
      {"add", Fn::Add, {ArgKind::Any, ArgKind::Any}},
      {"sub", Fn::Sub, {ArgKind::Any, ArgKind::Any}},
      {"in_qdq_unit", Fn::InQdqUnit, {ArgKind::Value}},
      {"feeds_quantize", Fn::FeedsQuantize, {ArgKind::Value}},
      {"feeds", Fn::Feeds, {ArgKind::Value, ArgKind::Any}},
      {"producer", Fn::Producer, {ArgKind::Value}},
      {"slice", Fn::Slice, {ArgKind::Value, ArgKind::Any, ArgKind::Any, ArgKind::Any, ArgKind::Any}, 1},
      {"join", Fn::Join, {ArgKind::Any, ArgKind::Value, ArgKind::Value, ArgKind::Value}},
      {"lower_triangular", Fn::LowerTriangular, {ArgKind::Value}},
      {"max_value", Fn::MaxValue, {ArgKind::Value}},
  };
  return b;
}

std::string builtin_list() {
  std::string s;
  for (const Builtin& b : builtins()) s += (s.empty() ? "" : ", ") + std::string(b.name);
  return s;
}

}  // namespace

match::Cmp cmp_of(const std::string& op) {
  using match::Cmp;
  if (op == "==") return Cmp::Eq;
  if (op == "!=") return Cmp::Ne;
  if (op == "<") return Cmp::Lt;
  if (op == "<=") return Cmp::Le;
  if (op == ">") return Cmp::Gt;
  if (op == ">=") return Cmp::Ge;
  return Cmp::In;
}

Term TermCompiler::name_arg(const dsl::Operand& op) const {
  const auto* n = std::get_if<dsl::NameRef>(&op.value);
  if (!n) fail(op.pos, "expected a pattern name (a leaf, a pattern node or a variadic list) here");
  auto it = names_.find(n->name);
  if (it == names_.end()) fail(op.pos, "unknown name '" + n->name + "' (not bound by the pattern)");
  Term t;
  t.pos = op.pos;
  switch (it->second.kind) {
    case PatternName::Kind::Leaf:
      t.kind = Term::Kind::Value;
      t.reg = it->second.reg;
      break;
    case PatternName::Kind::Node:
      t.kind = Term::Kind::Value;
      t.of_node = true;
      t.reg = it->second.reg;
      t.port = it->second.port;
      break;
    case PatternName::Kind::Variadic:
      t.kind = Term::Kind::Variadic;
      t.reg = it->second.reg;
      break;
  }
  return t;
}

Term TermCompiler::op(const dsl::FuncCall& f, dsl::Pos pos) const {
  Term t;
  t.kind = Term::Kind::Func;
  t.pos = pos;
  const bool unary = f.args.size() == 1;
  if (dsl::is_comparison(f.fn)) {
    t.fn = Fn::Compare;
    t.cmp = cmp_of(f.fn);
  } else if (f.fn == "+") t.fn = Fn::Add;
  else if (f.fn == "-") t.fn = unary ? Fn::Neg : Fn::Sub;
  else if (f.fn == "*") t.fn = Fn::Mul;
  else if (f.fn == "/") t.fn = Fn::Div;
  else if (f.fn == "%") t.fn = Fn::Mod;
  else if (f.fn == "!") t.fn = Fn::Not;
  else if (f.fn == "||") t.fn = Fn::Or;
  else t.fn = Fn::And;
  for (const dsl::Operand& a : f.args) t.args.push_back(term(a));
  if (t.fn == Fn::Compare && t.cmp == match::Cmp::In) in_needs_list(t.args[1], f.args[1].pos);
  return t;
}

void TermCompiler::in_needs_list(const Term& rhs, dsl::Pos pos) const {
  if (rhs.kind != Term::Kind::Literal) return;
  const AttrValue& l = rhs.literal;
  if (!std::holds_alternative<std::vector<std::int64_t>>(l) && !std::holds_alternative<std::vector<float>>(l) &&
      !std::holds_alternative<std::vector<std::string>>(l) && !std::holds_alternative<std::vector<bool>>(l))
    fail(pos, "`in` needs a list on its right side");
}

Term TermCompiler::call(const dsl::FuncCall& f, dsl::Pos pos) const {
  if (dsl::is_operator(f.fn)) return op(f, pos);
  Term t;
  t.kind = Term::Kind::Func;
  t.pos = pos;
  const auto& table = builtins();
  auto b = std::find_if(table.begin(), table.end(), [&](const Builtin& x) { return f.fn == x.name; });
  if (b == table.end()) {
    t.native = find_native(f.fn);
    if (!t.native)
      fail(pos, "unknown function '" + f.fn + "' (builtins: " + builtin_list() +
                    "; a native predicate or function must be registered with register_predicate or "
                    "register_function before the rules are loaded)");
    t.fn = Fn::Native;
    t.key = f.fn;
    for (const dsl::Operand& a : f.args)
      t.args.push_back(std::holds_alternative<dsl::NameRef>(a.value) ? name_arg(a) : term(a));
    return t;
  }
  t.fn = b->fn;
  const std::size_t most = b->args.size(), least = most - b->optional;
  if (f.args.size() < least || f.args.size() > most)
    fail(pos, std::string(b->name) + "() takes " +
                  (least == most ? std::to_string(most) : std::to_string(least) + " or " + std::to_string(most)) +
                  " argument" + (most == 1 ? "" : "s") + ", not " + std::to_string(f.args.size()));
  for (std::size_t i = 0; i < f.args.size(); ++i) {
    const dsl::Operand& a = f.args[i];
    switch (b->args[i]) {
      case ArgKind::Value: {
        Term v = name_arg(a);
        if (v.kind == Term::Kind::Variadic)
          fail(a.pos, std::string(b->name) + "() takes one value; '" + std::get<dsl::NameRef>(a.value).name +
                          "' is a variadic list");
        t.args.push_back(std::move(v));
        break;
      }
      case ArgKind::AttrRef: {
        if (!std::holds_alternative<dsl::AttrRef>(a.value))
          fail(a.pos, std::string(b->name) + "() takes an attribute of a pattern node, like " + b->name + "(conv.group)");
        Term v = term(a);
        if (v.kind != Term::Kind::Attr) fail(a.pos, "op_type is always present; has()/absent() take an attribute");
        t.args.push_back(std::move(v));
        break;
      }
      case ArgKind::ValueOrList:
        t.args.push_back(std::holds_alternative<dsl::NameRef>(a.value) ? name_arg(a) : term(a));
        break;
      case ArgKind::Any: t.args.push_back(term(a)); break;
    }
  }
  // A domain is a name: opset(17) or opset(true) would silently never hold.
  if (t.fn == Fn::Opset && t.args[0].kind == Term::Kind::Literal &&
      !std::holds_alternative<std::string>(t.args[0].literal))
    fail(f.args[0].pos, "opset() takes a domain name in quotes, like opset(\"\") or opset(\"com.microsoft\")");
  return t;
}

Term TermCompiler::term(const dsl::Operand& op) const {
  Term t;
  t.pos = op.pos;
  if (const auto* lit = std::get_if<dsl::Literal>(&op.value)) {
    t.kind = Term::Kind::Literal;
    t.literal = literal_to_attr(*lit, o_);
    return t;
  }
  if (const auto* ref = std::get_if<dsl::AttrRef>(&op.value)) {
    auto it = names_.find(ref->node);
    if (it == names_.end()) fail(ref->pos, "unknown pattern node '" + ref->node + "'");
    if (it->second.kind != PatternName::Kind::Node)
      fail(ref->pos, "'" + ref->node + "' is a " +
                         (it->second.kind == PatternName::Kind::Leaf ? "leaf (a value)" : "variadic list") +
                         "; attributes belong to pattern nodes");
    t.reg = it->second.reg;
    if (ref->attr == "op_type") {
      t.kind = Term::Kind::OpType;
    } else {
      check_attr_declared(it->second, ref->attr, ref->pos);
      t.kind = Term::Kind::Attr;
      t.key = ref->attr;
    }
    return t;
  }
  if (const auto* f = std::get_if<dsl::FuncCall>(&op.value)) return call(*f, op.pos);
  if (const auto* list = std::get_if<dsl::OperandList>(&op.value)) {
    t.kind = Term::Kind::List;
    for (const dsl::Operand& item : list->items) t.args.push_back(term(item));
    return t;
  }
  const auto& n = std::get<dsl::NameRef>(op.value);
  fail(op.pos, "'" + n.name + "' alone is not a value here; use an attribute (`" + n.name +
                   ".attr`) or a function of it (`rank(" + n.name + ")`, `value(" + n.name + ")`)");
}

void TermCompiler::check_attr_declared(const PatternName& n, const std::string& key, dsl::Pos pos) const {
  if (!ops_ || n.ops.empty()) return;
  std::string first_error;
  for (const std::string& op : n.ops) {
    auto s = ops_->find(op);
    if (s == ops_->end()) return;  // an op without a schema may have any attribute
    std::string e = undeclared_attribute(s->second, op, key);
    if (e.empty()) return;
    if (first_error.empty()) first_error = e;
  }
  fail(pos, first_error);
}

match::ExprCheck TermCompiler::check(const dsl::Constraint& c) const {
  match::ExprCheck out;
  out.negated = c.negated;
  out.lhs = term(c.lhs);
  if (c.op.empty()) {
    out.mode = match::ExprCheck::Mode::Predicate;
    if (out.lhs.kind != Term::Kind::Func && out.lhs.kind != Term::Kind::Literal)
      fail(c.pos, "a constraint without a comparison must be a predicate like has(n.attr), const(w) or my_check(n)");
    return out;
  }
  out.mode = match::ExprCheck::Mode::Compare;
  out.cmp = cmp_of(c.op);
  out.rhs = term(c.rhs);
  if (out.cmp == match::Cmp::In) in_needs_list(out.rhs, c.rhs.pos);
  return out;
}

void term_registers(const Term& t, const match::MatchProgram& p, std::vector<std::uint32_t>& nodes,
                    std::vector<std::uint32_t>& values) {
  switch (t.kind) {
    case Term::Kind::Attr:
    case Term::Kind::OpType: nodes.push_back(t.reg); break;
    case Term::Kind::Value: (t.of_node ? nodes : values).push_back(t.reg); break;
    case Term::Kind::Variadic: nodes.push_back(p.variadics[t.reg].node); break;
    default: break;
  }
  for (const Term& a : t.args) term_registers(a, p, nodes, values);
}

bool reads_each_list(const Term& t, const match::MatchProgram& p) {
  if (t.kind == Term::Kind::Variadic && p.variadics[t.reg].each >= 0) return true;
  for (const Term& a : t.args)
    if (reads_each_list(a, p)) return true;
  return false;
}

}  // namespace graphfuse::rules
