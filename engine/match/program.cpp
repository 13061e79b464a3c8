// Listing match programs in readable form.
#include "match/program.h"

#include <sstream>

#include "graphfuse/io.h"
#include "match/attr_compare.h"

namespace graphfuse::match {

namespace {

// Streams rather than `"x" + std::string(...)`: GCC 12 warns falsely (-Wrestrict) on
// a literal plus a temporary string.
struct Reg {
  const MatchProgram& p;
  std::uint32_t r;
};
std::ostream& operator<<(std::ostream& o, Reg n) {
  o << 'n' << n.r;
  if (n.r < n.p.node_names.size() && !n.p.node_names[n.r].empty()) o << '(' << n.p.node_names[n.r] << ')';
  return o;
}

void put_value(std::ostream& o, const AttrValue& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, float>) o << x;
        else if constexpr (std::is_same_v<T, bool>) o << (x ? "true" : "false");
        else if constexpr (std::is_same_v<T, std::string>) o << '"' << x << '"';
        else o << '<' << attr_kind_name(v) << '>';
      },
      v);
}

const char* fn_name(Fn f) {
  switch (f) {
    case Fn::Const: return "const";
    case Fn::Has: return "has";
    case Fn::Absent: return "absent";
    case Fn::Rank: return "rank";
    case Fn::DType: return "dtype";
    case Fn::Shape: return "shape";
    case Fn::Dim: return "dim";
    case Fn::Value: return "value";
    case Fn::Values: return "values";
    case Fn::Len: return "len";
    case Fn::Compose: return "compose";
    case Fn::Range: return "range";
    case Fn::Contains: return "contains";
    case Fn::Uses: return "uses";
    case Fn::AsTensor: return "as_tensor";
    case Fn::Default: return "default";
    case Fn::Opset: return "opset";
    case Fn::SameShape: return "same_shape";
    case Fn::Inverse: return "inverse";
    case Fn::At: return "at";
    case Fn::Concat: return "concat";
    case Fn::Repeat: return "repeat";
    case Fn::Add: return "add";
    case Fn::Sub: return "sub";
    case Fn::InQdqUnit: return "in_qdq_unit";
    case Fn::FeedsQuantize: return "feeds_quantize";
    case Fn::Feeds: return "feeds";
    case Fn::Producer: return "producer";
    case Fn::Native: return "native";
    case Fn::Mul: return "*";
    case Fn::Div: return "/";
    case Fn::Mod: return "%";
    case Fn::Neg: return "-";
    case Fn::Not: return "!";
    case Fn::Or: return "||";
    case Fn::And: return "&&";
    case Fn::Compare: return "compare";
    case Fn::Slice: return "slice";
    case Fn::Join: return "join";
    case Fn::LowerTriangular: return "lower_triangular";
    case Fn::MaxValue: return "max_value";
  }
  return "?";
}

// The symbol of an operator term (`a * b`, `!a`, `a < b`), or null for a function.
const char* infix(const Term& t) {
  switch (t.fn) {
    case Fn::Mul: case Fn::Div: case Fn::Mod: case Fn::Neg: case Fn::Not: case Fn::Or: case Fn::And:
      return fn_name(t.fn);
    case Fn::Compare: return cmp_name(t.cmp);
    default: return nullptr;
  }
}

// Binding strength of an operator term for author_text (0: not an operator).
int precedence(const Term& t) {
  if (t.kind != Term::Kind::Func) return 0;
  switch (t.fn) {
    case Fn::Or: return 1;
    case Fn::And: return 2;
    case Fn::Not: return 3;
    case Fn::Compare: return 4;
    case Fn::Add: case Fn::Sub: return 5;
    case Fn::Mul: case Fn::Div: case Fn::Mod: return 6;
    case Fn::Neg: return 7;
    default: return 0;
  }
}

const char* symbol(const Term& t) {
  switch (t.fn) {
    case Fn::Add: return "+";
    case Fn::Sub: return "-";
    case Fn::Compare: return cmp_name(t.cmp);
    default: return fn_name(t.fn);
  }
}

// One printer for the two listings of a term. The program listing (`graphfuse explain`'s dump)
// names registers (`n0(conv)`), parenthesises every operator term and prints add/sub as calls;
// the author listing (messages that quote a rule) uses the rule's own names, prints literals as
// a rule writes them and parenthesises only where precedence needs it.
class TermPrinter {
 public:
  enum class Style { Program, Author };
  TermPrinter(std::ostream& o, const MatchProgram& p, Style s) : o_(o), p_(p), author_(s == Style::Author) {}

  void put(const Term& t) {
    switch (t.kind) {
      case Term::Kind::Literal:
        if (author_) o_ << format_attr_value(t.literal);
        else put_value(o_, t.literal);
        break;
      case Term::Kind::Attr: put_node(t.reg); o_ << '.' << t.key; break;
      case Term::Kind::OpType: put_node(t.reg); o_ << ".op_type"; break;
      case Term::Kind::Value: put_value_term(t); break;
      case Term::Kind::Variadic: o_ << p_.variadics[t.reg].name << "..."; break;
      case Term::Kind::Func:
        if (const char* op = operator_symbol(t); op && t.args.size() == 2) {
          if (!author_) o_ << '(';
          put_operand(t, t.args[0], false);
          o_ << ' ' << op << ' ';
          put_operand(t, t.args[1], true);
          if (!author_) o_ << ')';
          break;
        } else if (op && t.args.size() == 1) {
          o_ << op;
          put_operand(t, t.args[0], false);
          break;
        }
        [[fallthrough]];
      case Term::Kind::List:
        if (t.kind == Term::Kind::Func) o_ << (t.fn == Fn::Native ? t.key.c_str() : fn_name(t.fn));
        o_ << (t.kind == Term::Kind::Func ? '(' : '[');
        for (std::size_t i = 0; i < t.args.size(); ++i) {
          if (i) o_ << ", ";
          put(t.args[i]);
        }
        o_ << (t.kind == Term::Kind::Func ? ')' : ']');
        break;
    }
  }

 private:
  // The symbol this style prints between or before operands, or null for a call.
  const char* operator_symbol(const Term& t) const { return author_ ? (precedence(t) ? symbol(t) : nullptr) : infix(t); }

  void put_operand(const Term& parent, const Term& a, bool right) {
    const int pa = precedence(a), pt = precedence(parent);
    const bool paren = author_ && pa && (pa < pt || (right && pa == pt));
    if (paren) o_ << '(';
    put(a);
    if (paren) o_ << ')';
  }

  void put_node(std::uint32_t r) {
    if (!author_) o_ << Reg{p_, r};
    else if (r < p_.node_names.size() && !p_.node_names[r].empty()) o_ << p_.node_names[r];
    else o_ << 'n' << r;
  }

  void put_value_term(const Term& t) {
    if (t.of_node) {
      put_node(t.reg);
      if (!author_ || t.port) o_ << ':' << t.port;
    } else if (author_ && t.reg < p_.value_names.size() && !p_.value_names[t.reg].empty()) {
      o_ << p_.value_names[t.reg];
    } else {
      o_ << 'v' << t.reg;
    }
  }

  std::ostream& o_;
  const MatchProgram& p_;
  bool author_;
};

void put_term(std::ostream& o, const MatchProgram& p, const Term& t) {
  TermPrinter(o, p, TermPrinter::Style::Program).put(t);
}

// "key op literal" or "key op n1(t).key" (the node before the key is the caller's).
void put_attr_check(std::ostream& o, const MatchProgram& p, const AttrCheck& c) {
  o << c.key << ' ' << cmp_name(c.cmp);
  if (c.other_node >= 0) {
    o << ' ' << Reg{p, static_cast<std::uint32_t>(c.other_node)} << '.' << c.other_key;
  } else if (c.cmp != Cmp::Has && c.cmp != Cmp::Absent) {
    o << ' ';
    put_value(o, c.literal);
  }
}

}  // namespace

std::string author_text(const MatchProgram& p, const Term& t) {
  std::ostringstream o;
  TermPrinter(o, p, TermPrinter::Style::Author).put(t);
  return o.str();
}

std::string describe(const MatchProgram& p, const ExprCheck& c) {
  std::ostringstream o;
  if (c.mode == ExprCheck::Mode::Defined) o << "defined ";
  if (c.negated) o << '!';
  put_term(o, p, c.lhs);
  if (c.mode == ExprCheck::Mode::Compare) {
    o << ' ' << cmp_name(c.cmp) << ' ';
    put_term(o, p, c.rhs);
  }
  return o.str();
}

std::string disassemble(const MatchProgram& p) {
  std::ostringstream o;
  for (std::size_t pc = 0; pc < p.code.size(); ++pc) {
    const Instr& in = p.code[pc];
    o << pc << "  ";
    switch (in.op) {
      case Opcode::CheckOp: {
        o << "check_op   " << Reg{p, in.a} << " in {";
        const auto& set = p.op_sets[in.aux];
        for (std::size_t i = 0; i < set.size(); ++i) o << (i ? ", " : "") << set[i].name();
        o << '}';
        break;
      }
      case Opcode::CheckArity: o << "arity      " << Reg{p, in.a} << " has " << in.b << " inputs"; break;
      case Opcode::CheckMinArity: o << "arity      " << Reg{p, in.a} << " has >= " << in.b << " inputs"; break;
      case Opcode::CheckOutputs: o << "outputs    " << Reg{p, in.a} << " has " << in.b << " outputs"; break;
      case Opcode::OutputOf: o << "output     v" << in.c << " = output " << in.b << " of " << Reg{p, in.a}; break;
      case Opcode::Consumer:
        o << "consumer   " << Reg{p, in.c} << " = a node reading v" << in.a;
        if (in.b == kAnySlot) o << " (any input)";
        else o << " at input " << in.b;
        break;
      case Opcode::CheckConst: {
        const ConstCheck& c = p.consts[in.aux];
        o << "const      v" << in.a << " ~ ";
        if (c.has_tensor) o << "<tensor>";
        else if (c.boolean) o << (c.value != 0 ? "true" : "false");
        else o << c.value;
        break;
      }
      case Opcode::CheckExpr: o << "check      " << describe(p, p.exprs[in.aux]); break;
      case Opcode::LoadInput: o << "load       v" << in.c << " = input " << in.b << " of " << Reg{p, in.a}; break;
      case Opcode::Producer:
        o << "producer   " << Reg{p, in.c} << " = producer of v" << in.a << " (output " << in.b << ')';
        break;
      case Opcode::ValueIs: o << "value_is   v" << in.a << " == output " << in.c << " of " << Reg{p, in.b}; break;
      case Opcode::SameValue: o << "same       v" << in.a << " == v" << in.b; break;
      case Opcode::CheckAttr: {
        const AttrCheck& c = p.attr_checks[in.aux];
        o << "check_attr " << Reg{p, c.node} << '.';
        put_attr_check(o, p, c);
        break;
      }
      case Opcode::CheckEach: {
        const Each& ea = p.eaches[in.aux];
        o << "each       inputs " << ea.start << ".. of " << Reg{p, ea.node} << " from nodes in {";
        for (std::size_t i = 0; i < ea.ops.size(); ++i) o << (i ? ", " : "") << ea.ops[i].name();
        o << (ea.ops.empty() ? "*}" : "}") << " with " << ea.arity << " inputs";
        for (const AttrCheck& c : ea.attrs) {
          o << ", ";
          put_attr_check(o, p, c);
        }
        break;
      }
      case Opcode::Fork:
        o << "fork      ";
        for (std::uint32_t t : p.forks[in.aux]) o << ' ' << t;
        break;
      case Opcode::Jump: o << "jump       " << in.aux; break;
      case Opcode::Accept: o << "accept"; break;
    }
    o << '\n';
  }
  return o.str();
}

}  // namespace graphfuse::match
