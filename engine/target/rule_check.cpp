// `check --target`: what a rule set can and cannot do on a target, found before running.
#include "target/rule_check.h"

#include <algorithm>
#include <map>
#include <set>

#include "match/program.h"

namespace graphfuse::target {

namespace {

// The ops pattern node register `reg` may match (union over the program's CheckOp steps);
// empty when unconstrained.
std::set<std::string> ops_of(const match::MatchProgram& p, std::uint32_t reg) {
  std::set<std::string> out;
  for (const match::Instr& i : p.code)
    if (i.op == match::Opcode::CheckOp && i.a == reg)
      for (OpType op : p.op_sets[i.aux]) out.insert(std::string(op.name()));
  return out;
}

std::string join(const std::set<std::string>& xs, const char* sep) {
  std::string s;
  for (const std::string& x : xs) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The values the rewrite can give attribute `key` of node `n`: known literals and
// op-type copies; `open` when a spread, copy or computed value may also set it.
struct AttrValues {
  std::set<std::string> values;
  bool open = false;
  bool set = false;
};

// Whether the pattern requires node register `reg` to lack attribute `key` (`{!key}`).
bool pattern_requires_absent(const match::MatchProgram& p, std::uint32_t reg, const std::string& key) {
  for (const match::Instr& i : p.code) {
    if (i.op != match::Opcode::CheckAttr) continue;
    const match::AttrCheck& c = p.attr_checks[i.aux];
    if (c.node == reg && c.key == key && c.cmp == match::Cmp::Absent) return true;
  }
  return false;
}

AttrValues values_for(const match::RwNode& n, const match::MatchProgram& p, const std::string& key) {
  AttrValues v;
  for (const match::RwAttr& a : n.attrs) {
    if (a.kind == match::RwAttr::Kind::Spread) {
      // A spread copies whatever the matched node has, unless the pattern says it has no `key`.
      if (!pattern_requires_absent(p, a.node, key)) v.open = true;
      continue;
    }
    if (a.key != key) continue;
    v.set = true;
    switch (a.kind) {
      case match::RwAttr::Kind::Literal: v.values = {attr_text(a.literal)}; v.open = false; break;
      case match::RwAttr::Kind::OpTypeOf: {
        std::set<std::string> ops = ops_of(p, a.node);
        if (ops.empty()) v.open = true;
        v.values = ops;
        break;
      }
      default: v.open = true; v.values.clear(); break;
    }
  }
  return v;
}

// Unusable / partial findings for one rule.
void check_kernels(const Rule& r, const TargetProfile& t, std::vector<Finding>& out) {
  const match::MatchProgram& p = r.compiled->match;
  for (const match::RwNode& n : r.compiled->rewrite.nodes) {
    std::set<std::string> ops;
    if (n.op_of >= 0) ops = ops_of(p, static_cast<std::uint32_t>(n.op_of));
    else ops.insert(std::string(n.op.name()));
    std::set<std::string> missing;
    for (const std::string& op : ops)
      if (!t.has_op(op)) missing.insert(op);
    if (!missing.empty()) {
      const OpSupport* s = missing.size() == 1 ? t.find(*missing.begin()) : nullptr;
      std::string note = s && !s->note.empty() ? " (" + s->note + ")" : "";
      if (missing.size() == ops.size())
        out.push_back({Finding::Kind::Unusable, r.loc, r.name,
                       "creates " + join(missing, "|") + ", which " + t.name + " lacks" + note});
      else
        out.push_back({Finding::Kind::Partial, r.loc, r.name,
                       "fires on " + t.name + " only where it creates an op it has: " + join(missing, "|") + " missing"});
      continue;
    }
    if (ops.size() != 1) continue;
    const OpSupport* s = t.find(*ops.begin());
    if (!s) continue;
    for (const AttrCondition& c : s->attrs) {
      AttrValues v = values_for(n, p, c.name);
      if (!v.set && !v.open && c.fallback.empty()) {
        if (c.required)
          out.push_back({Finding::Kind::Unusable, r.loc, r.name,
                         "creates " + s->op + " without " + c.name + ", which " + t.name + " requires" +
                             (s->note.empty() ? "" : " (" + s->note + ")")});
        continue;
      }
      if (c.values.empty() || v.values.empty()) continue;
      std::set<std::string> bad, good;
      for (const std::string& x : v.values)
        (std::find(c.values.begin(), c.values.end(), x) == c.values.end() ? bad : good).insert(x);
      if (bad.empty()) continue;
      std::string what = "creates " + s->op + " with " + c.name + " " + join(bad, "|");
      if (good.empty() && !v.open)
        out.push_back({Finding::Kind::Unusable, r.loc, r.name,
                       what + ", which " + t.name + " does not implement" + (s->note.empty() ? "" : " (" + s->note + ")")});
      else
        out.push_back({Finding::Kind::Partial, r.loc, r.name,
                       what + ", which " + t.name + " does not implement; fires only for " +
                           (good.empty() ? "other values" : join(good, "|"))});
    }
  }
}

void term_text(const match::Term& t, std::string& out) {
  out += "(" + std::to_string(static_cast<int>(t.kind)) + " " + std::to_string(static_cast<int>(t.fn)) + " " +
         attr_text(t.literal) + " " + std::to_string(t.reg) + " " + std::to_string(t.port) + " " + t.key +
         (t.of_node ? " n" : "");
  for (const match::Term& a : t.args) term_text(a, out);
  out += ")";
}

// Two rules with equal signatures accept exactly the same matches: the program's steps,
// plus the literals and constraints the disassembly abbreviates.
std::string signature(const match::MatchProgram& p) {
  std::string s = match::disassemble(p);
  for (const match::AttrCheck& c : p.attr_checks)
    s += "|attr " + std::to_string(c.node) + " " + c.key + " " + std::to_string(static_cast<int>(c.cmp)) + " " +
         attr_text(c.literal) + " " + std::to_string(c.other_node) + " " + c.other_key;
  for (const match::ExprCheck& e : p.exprs) {
    s += "|expr " + std::to_string(static_cast<int>(e.mode)) + (e.negated ? "!" : "") + std::to_string(static_cast<int>(e.cmp));
    term_text(e.lhs, s);
    term_text(e.rhs, s);
  }
  for (const match::ConstCheck& c : p.consts) s += "|const " + std::to_string(c.value) + (c.has_tensor ? attr_text(c.tensor) : "");
  s += "|external " + std::to_string(static_cast<int>(p.on_external_use));
  return s;
}

std::set<std::string> created_ops(const Rule& r) {
  std::set<std::string> out;
  for (const match::RwNode& n : r.compiled->rewrite.nodes)
    if (n.op_of < 0) out.insert(std::string(n.op.name()));
  return out;
}

std::set<std::string> root_ops(const Rule& r) {
  std::set<std::string> out;
  for (OpType op : r.root_ops) out.insert(std::string(op.name()));
  return out;
}

bool meets(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) != 0; });
}

}  // namespace

const char* finding_kind_name(Finding::Kind k) {
  switch (k) {
    case Finding::Kind::Unusable: return "unusable";
    case Finding::Kind::Partial: return "partial";
    case Finding::Kind::Shadowed: return "shadowed";
    case Finding::Kind::Undoes: return "undoes";
  }
  return "?";
}

std::vector<Finding> check_rules(const RuleSet& rules, const TargetProfile& t) {
  std::vector<Finding> out;
  const auto& rs = rules.rules();
  // Application order among equal matches: benefit (higher first), then rule order.
  std::vector<std::size_t> order(rs.size());
  for (std::size_t i = 0; i < rs.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rs[a].benefit > rs[b].benefit; });
  std::map<std::string, std::size_t> first_with_program;  // disassembled match program -> rule
  std::map<std::size_t, std::size_t> shadowed_by;
  for (std::size_t i : order) {
    if (!rs[i].enabled) continue;
    std::string prog = signature(rs[i].compiled->match);
    auto [it, fresh] = first_with_program.emplace(prog, i);
    if (!fresh) shadowed_by[i] = it->second;
  }
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Rule& r = rs[i];
    if (!r.enabled) continue;
    check_kernels(r, t, out);
    if (auto it = shadowed_by.find(i); it != shadowed_by.end()) {
      const Rule& w = rs[it->second];
      out.push_back({Finding::Kind::Shadowed, r.loc, r.name,
                     "shadowed by " + w.label() + ": the same pattern and constraints, and it is tried first (" +
                         (w.benefit != r.benefit ? "benefit " + std::to_string(w.benefit) + " > " + std::to_string(r.benefit)
                                                 : std::string("earlier in rule order")) +
                         ")"});
    }
    // A pair undoes itself when each creates the other's root op and neither recreates
    // its own root (rules that rebuild their root op, such as Transpose cancellation,
    // are not reversals). A shadowed rule never fires, so it undoes nothing.
    if (shadowed_by.count(i)) continue;
    const auto ra = root_ops(r), ca = created_ops(r);
    if (ra.empty() || meets(ra, ca)) continue;
    for (std::size_t j = i + 1; j < rs.size(); ++j) {
      const Rule& o = rs[j];
      if (!o.enabled || shadowed_by.count(j)) continue;
      const auto rb = root_ops(o), cb = created_ops(o);
      if (rb.empty() || meets(rb, cb)) continue;
      if (meets(ca, rb) && meets(cb, ra))
        out.push_back({Finding::Kind::Undoes, r.loc, r.name,
                       "and " + o.label() + " undo each other (" + join(ra, "|") + " -> " + join(ca, ", ") + " -> " +
                           join(cb, ", ") + "): oscillation risk"});
    }
  }
  return out;
}

}  // namespace graphfuse::target
