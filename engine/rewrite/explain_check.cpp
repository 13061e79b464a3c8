// Evaluating a failed check's parts again, to say what each one was.
#include "rewrite/explain_check.h"

#include "graphfuse/io.h"
#include "match/attr_compare.h"
#include "graph/const_facts.h"
#include "match/eval.h"

namespace graphfuse::rewrite {

namespace {

using match::Fn;
using match::Term;

class Facts {
 public:
  Facts(const Graph& g, const match::MatchProgram& p, const match::Embedding& e) : g_(g), p_(p), e_(e) {}

  std::string quoted(const Term& t) const { return "`" + match::author_text(p_, t) + "`"; }

  // "`dim(w, 2)` is 3", or "`dim(x, 1)` is unknown ('x' has no known shape)".
  std::string value(const Term& t) const {
    auto v = match::eval_term(t, g_, e_, p_);
    if (v) return quoted(t) + " is " + format_attr_value(*v);
    std::string why = unknown_cause(t);
    return quoted(t) + " is unknown" + (why.empty() ? "" : " (" + why + ")");
  }

  // The first missing fact under t: a value without a known shape or dtype, a constant
  // without data, an absent attribute.
  std::string unknown_cause(const Term& t) const {
    if (t.kind == Term::Kind::Attr) {
      NodeId n = e_.nodes[t.reg];
      if (g_.alive(n) && !g_.node(n).attrs.has(t.key)) return "'" + g_.node(n).id + "' has no attribute " + t.key;
    }
    if (t.kind == Term::Kind::Func) {
      for (const Term& a : t.args) {
        if (a.kind != Term::Kind::Value) continue;
        ValueRef v = a.of_node ? ValueRef{e_.nodes[a.reg], a.port} : e_.values[a.reg];
        if (!v.valid() || !g_.alive(v.node)) continue;
        ValueType vt = known_type(g_, v);
        std::string name = "'" + g_.value_name(v) + "'";
        switch (t.fn) {
          case Fn::Rank: case Fn::Shape: case Fn::Dim: case Fn::SameShape:
            if (!vt.shape_known) return name + " has no known shape";
            break;
          case Fn::DType:
            if (vt.dtype == DType::Undefined) return name + " has no known dtype";
            break;
          case Fn::Value: case Fn::Values: case Fn::Slice:
            if (!is_constant(g_, v)) return name + " is not a constant";
            break;
          default:
            break;
        }
      }
      for (const Term& a : t.args)
        if (!match::eval_term(a, g_, e_, p_) && a.kind != Term::Kind::Value && a.kind != Term::Kind::Variadic)
          if (std::string why = unknown_cause(a); !why.empty()) return why;
    }
    return {};
  }

  // Each comparison or predicate under `||`, `&&` and `!`, with its truth.
  void parts(const Term& t, std::string& out) const {
    if (t.kind == Term::Kind::Func && (t.fn == Fn::Or || t.fn == Fn::And || t.fn == Fn::Not)) {
      for (const Term& a : t.args) parts(a, out);
      return;
    }
    out += (out.empty() ? "" : "; ") + value(t);
    if (t.kind == Term::Kind::Func && t.fn == Fn::Compare) {
      std::string sides;
      for (const Term& a : t.args)
        if (a.kind != Term::Kind::Literal) sides += (sides.empty() ? "" : ", ") + value(a);
      if (!sides.empty()) out += " (" + sides + ")";
    }
  }

 private:
  const Graph& g_;
  const match::MatchProgram& p_;
  const match::Embedding& e_;
};

}  // namespace

std::string check_facts(const Graph& g, const match::MatchProgram& p, const match::ExprCheck& c,
                        const match::Embedding& e) {
  Facts f(g, p, e);
  using Mode = match::ExprCheck::Mode;
  const std::string unknown_note = "; an unknown fact fails the constraint, negated or not";
  switch (c.mode) {
    case Mode::Defined:
      return "the rewrite computes " + f.value(c.lhs);
    case Mode::Compare: {
      bool known = match::eval_term(c.lhs, g, e, p) && match::eval_term(c.rhs, g, e, p);
      std::string want = std::string(c.negated ? "not " : "") + match::cmp_name(c.cmp) + " ";
      std::string out = f.value(c.lhs);
      if (c.rhs.kind == Term::Kind::Literal) out += ", want " + want + format_attr_value(c.rhs.literal);
      else out += " and " + f.value(c.rhs) + ", want " + want + f.quoted(c.rhs);
      return known ? out : out + unknown_note;
    }
    case Mode::Predicate: {
      auto v = match::eval_term(c.lhs, g, e, p);
      if (c.lhs.kind == Term::Kind::Func &&
          (c.lhs.fn == Fn::Or || c.lhs.fn == Fn::And || c.lhs.fn == Fn::Not)) {
        std::string out;
        f.parts(c.lhs, out);
        return out + (v ? "" : "; the whole is unknown, which fails the constraint");
      }
      std::string out = f.value(c.lhs);
      if (!v) return out + unknown_note;
      return out + (c.negated ? ", want false" : ", want true");
    }
  }
  return {};
}

}  // namespace graphfuse::rewrite
