// Why-not: what a rule does at one node, from the pattern step that fails to the
// match that wins a conflict, found by running the real matcher and driver.
#include <algorithm>
#include <map>
#include <sstream>

#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "match/embedding_values.h"
#include "match/program.h"
#include "match/vm.h"
#include "rewrite/driver.h"
#include "rewrite/explain_check.h"
#include "rewrite/legality.h"

namespace graphfuse {

namespace {

using match::Instr;
using match::MatchProgram;
using match::Opcode;

/// What the rule makes of the node in one graph state.
struct Analysis {
  enum class Kind { NoMatch, Illegal, Legal } kind = Kind::NoMatch;
  std::string detail;  // one or more lines, each starting with two spaces
  std::string short_reason;
};

std::string node_desc(const Graph& g, NodeId n) {
  if (!g.alive(n)) return "a removed node";
  return "'" + g.node(n).id + "' (" + std::string(g.node(n).op.name()) + ")";
}

// "t.yaml:7: `bias = BiasAdd(conv, b)`" for a position inside the rule's pattern text.
std::string pattern_line(const Rule& rule, dsl::Pos pos) {
  if (pos.line <= 0) return {};
  std::istringstream in(rule.pattern);
  std::string line;
  for (int i = 0; i < pos.line && std::getline(in, line); ++i) {
  }
  line.erase(0, line.find_first_not_of(" \t"));
  std::string where = rule.pattern_loc.file;
  if (rule.pattern_loc.line > 0) where += ":" + std::to_string(rule.pattern_loc.line + pos.line - 1);
  return where + ": `" + line + "`";
}

// The graph side of a failed step, when the registers still hold what the step saw.
std::string step_facts(const Graph& g, const MatchProgram& p, const Instr& in, const match::Embedding& e) {
  auto node_at = [&](std::uint32_t reg) { return reg < e.nodes.size() ? e.nodes[reg] : kNoNode; };
  auto value_at = [&](std::uint32_t reg) { return reg < e.values.size() ? e.values[reg] : ValueRef{}; };
  auto value_desc = [&](ValueRef v) {
    return v.valid() && g.alive(v.node) ? "'" + g.value_name(v) + "'" : std::string("nothing");
  };
  switch (in.op) {
    case Opcode::CheckOp:
      return "the node there is " + node_desc(g, node_at(in.a));
    case Opcode::CheckArity:
      return node_desc(g, node_at(in.a)) + " has " + std::to_string(g.node(node_at(in.a)).inputs.size()) +
             " inputs; the pattern gives it " + std::to_string(in.b);
    case Opcode::LoadInput:
      return node_desc(g, node_at(in.a)) + " has no input " + std::to_string(in.b);
    case Opcode::Producer: {
      ValueRef v = value_at(in.a);
      if (!v.valid()) return "the input is absent";
      if (v.port != in.b)
        return "the input reads output " + std::to_string(v.port) + " of " + node_desc(g, v.node) +
               ", the pattern wants output " + std::to_string(in.b);
      return node_desc(g, v.node) + " is already matched as another pattern node";
    }
    case Opcode::ValueIs:
      return "the value is " + value_desc(value_at(in.a)) + ", the pattern wants output " + std::to_string(in.c) +
             " of " + node_desc(g, node_at(in.b));
    case Opcode::SameValue:
      return "one name stands for two different values: " + value_desc(value_at(in.a)) + " and " +
             value_desc(value_at(in.b));
    case Opcode::CheckAttr: {
      const match::AttrCheck& c = p.attr_checks[in.aux];
      NodeId n = node_at(c.node);
      const AttrValue* a = g.alive(n) ? g.node(n).attrs.find(c.key) : nullptr;
      return node_desc(g, n) + (a ? " has " + c.key + " = " + format_attr_value(*a) : " has no attribute " + c.key);
    }
    default:
      return {};
  }
}

std::string legality_detail(const Graph& g, const Rule& rule, const match::Embedding& e, RejectReason why,
                            const std::vector<char>& is_output) {
  const MatchProgram& p = rule.compiled->match;
  auto name_of = [&](std::size_t r) {
    std::string n = r < p.node_names.size() ? p.node_names[r] : "";
    return n.empty() ? std::string("the pattern's node ") + std::to_string(r) : "pattern node `" + n + "`";
  };
  auto is_root = [&](std::size_t r) { return std::find(p.roots.begin(), p.roots.end(), r) != p.roots.end(); };
  std::string out;
  std::vector<NodeId> elements;  // of the eaches (`Transpose(xs)...`)
  match::append_each_nodes(g, e, p, elements);
  switch (why) {
    case RejectReason::ExternalUse:
      for (NodeId n : elements)
        if (g.use_count(n) != 1)
          return "  " + node_desc(g, n) + ", matched as an element of an each, has " +
                 std::to_string(g.use_count(n)) + " uses; the match accounts for 1\n";
      for (std::size_t r = 0; r < e.nodes.size(); ++r) {
        NodeId n = e.nodes[r];
        if (is_root(r) || g.use_count(n) == p.internal_uses[r]) continue;
        out += "  " + node_desc(g, n) + ", matched as " + name_of(r) + ", has " + std::to_string(g.use_count(n)) +
               " uses; the match accounts for " + std::to_string(p.internal_uses[r]);
        std::string outside;
        for (std::uint32_t port = 0; port < g.node(n).outputs.size(); ++port)
          for (const Use& u : g.consumers(ValueRef{n, port}))
            if (std::find(e.nodes.begin(), e.nodes.end(), u.node) == e.nodes.end())
              outside += (outside.empty() ? "" : ", ") + node_desc(g, u.node);
        if (!outside.empty()) out += "; also read by " + outside;
        return out + "\n";
      }
      return "  a root that is replaced by other values has uses of outputs the pattern does not name\n";
    case RejectReason::GraphOutput:
      for (std::size_t r = 0; r < e.nodes.size(); ++r)
        if (!is_root(r) && is_output[e.nodes[r]]) return "  " + node_desc(g, e.nodes[r]) + ", matched as " + name_of(r) + ", is a graph output\n";
      for (NodeId n : elements)
        if (is_output[n]) return "  " + node_desc(g, n) + ", matched as an element of an each, is a graph output\n";
      break;
    case RejectReason::LeafOverlap:
      return "  a leaf of the pattern is produced inside the match\n";
    case RejectReason::MissingAttribute:
      for (const auto& [reg, key] : rule.compiled->rewrite.reads)
        if (!g.node(e.nodes[reg]).attrs.has(key))
          return "  the rewrite reads attribute " + key + " of " + node_desc(g, e.nodes[reg]) + ", which has none\n";
      break;
    case RejectReason::ErasedOutput: {
      rewrite::OutputTakeover t = rewrite::output_takeover(g, *rule.compiled, e);
      if (t.block != rewrite::OutputBlock::None)
        return "  the root " + node_desc(g, t.output.node) + " is erased, and " + rewrite::describe(g, t) + "\n";
      break;
    }
    case RejectReason::Cycle:
      return "  replacing the roots would create a cycle\n";
    default:
      break;
  }
  return out;
}

Analysis analyse(const Graph& g, const Rule& rule, NodeId n) {
  const MatchProgram& p = rule.compiled->match;
  std::vector<char> is_output(g.capacity(), 0);
  for (ValueRef v : g.outputs()) is_output[v.node] = 1;
  Analysis a;
  match::VmState st;
  st.keep_furthest = true;
  int first_reason = -1;
  match::Embedding first;
  bool legal = false;
  std::size_t found = match::run_program(p, g, n, st, [&](const match::Embedding& e) {
    int verdict = rewrite::check_legal(g, *rule.compiled, e, is_output);
    if (verdict < 0) {
      legal = true;
      return false;
    }
    if (first_reason < 0) {
      first_reason = verdict;
      first = e;
    }
    return true;
  });
  if (legal) {
    a.kind = Analysis::Kind::Legal;
    a.short_reason = "matches; the match is legal";
    return a;
  }
  if (found > 0) {
    auto why = static_cast<RejectReason>(first_reason);
    a.kind = Analysis::Kind::Illegal;
    a.short_reason = "matches, but is not legal: " + std::string(reject_reason_name(why));
    a.detail = legality_detail(g, rule, first, why, is_output);
    return a;
  }
  const Instr& in = p.code[st.furthest_fail];
  std::istringstream listing(match::disassemble(p));
  std::string step;
  for (std::uint32_t i = 0; i <= st.furthest_fail && std::getline(listing, step); ++i) {
  }
  a.kind = Analysis::Kind::NoMatch;
  a.short_reason = "no match: pattern step " + std::to_string(st.furthest_fail) + " fails";
  // A `where:` line or a computed rewrite value is quoted from where it was written; a
  // pattern step from the pattern.
  const match::ExprCheck* check = in.op == Opcode::CheckExpr ? &p.exprs[in.aux] : nullptr;
  if (check && check->loc.known()) {
    a.short_reason = "no match: " + std::string(check->mode == match::ExprCheck::Mode::Defined
                                                    ? "a value the rewrite computes is unknown"
                                                    : "a constraint does not hold");
    a.detail += "  " + check->loc.file + ":" + std::to_string(check->loc.line) + ": `" + check->text + "`\n";
  } else if (std::string where = pattern_line(rule, in.pos); !where.empty()) {
    a.detail += "  " + where + "\n";
  }
  a.detail += "  step " + step + "\n";
  std::string facts = check ? rewrite::check_facts(g, p, *check, st.furthest) : step_facts(g, p, in, st.furthest);
  if (!facts.empty()) a.short_reason += ": " + facts;
  return a;
}

std::string why_first(const RuleSet& rules, std::uint32_t winner, std::uint32_t loser) {
  if (rules[winner].benefit != rules[loser].benefit)
    return "it has the higher benefit, " + std::to_string(rules[winner].benefit) + " > " +
           std::to_string(rules[loser].benefit);
  if (winner != loser) return "same benefit, and its rule comes first";
  return "same rule; its root comes first in topological order";
}

}  // namespace

std::string explain_candidate(const Graph& g, const RuleSet& rules, std::string_view rule_name,
                              std::string_view node_id, const RewriteOptions& opt) {
  const Rule* rule = rules.find(rule_name);
  if (!rule) throw Error("unknown rule '" + std::string(rule_name) + "'");
  auto found = g.find(node_id);
  std::string by_value;  // the value name the user gave, when it is not a node id
  if (!found) {
    // ONNX names values and nodes apart: `--node` takes either.
    g.for_each_node([&](NodeId n) {
      for (std::uint32_t k = 0; !found && k < g.node(n).outputs.size(); ++k)
        if (g.value_name(ValueRef{n, k}) == node_id) found = n;
    });
    if (found) by_value = std::string(node_id);
  }
  if (!found)
    throw Error("no node or value '" + std::string(node_id) + "' in " + (g.source_file.empty() ? "the graph" : g.source_file));
  const NodeId node = *found;
  const auto rule_index = static_cast<std::uint32_t>(rule - rules.rules().data());

  std::string out = "rule " + rule->label() + ", node " + node_desc(g, node);
  if (!by_value.empty()) out += ", which produces '" + by_value + "'";
  if (g.node(node).loc.known()) out += " at " + g.node(node).loc.str();
  out += "\n";
  // The target may adjust the graph before the driver runs (its opset), as rewrite_graph
  // lets it: the analysis and the run both see that copy.
  Graph work = g;
  const std::string prepared = opt.gate ? opt.gate->prepare(work) : std::string();
  if (!prepared.empty()) out += "the target first: " + prepared + "\n";
  Analysis before = analyse(work, *rule, node);
  out += (prepared.empty() ? "input graph: " : "prepared graph: ") + before.short_reason + "\n" + before.detail;

  // Run the driver as apply would, watching this candidate and this node.
  RewriteOptions o;
  o.threads = opt.threads;
  o.max_rounds = opt.max_rounds;
  o.max_nodes = opt.max_nodes;
  o.only_rules = opt.only_rules;
  o.gate = opt.gate;
  o.throw_on_nonconvergence = false;
  bool runs = o.only_rules.empty() ? rule->enabled
                                   : std::find(o.only_rules.begin(), o.only_rules.end(), rule->name) != o.only_rules.end();
  std::map<std::pair<std::uint32_t, NodeId>, std::string> root_ids;  // applied matches' root ids
  std::map<NodeId, std::string> seen;  // nodes of applied matches, as they were before
  int fired = 0;
  std::string lost, taken_by, declined;
  rewrite::DriverHooks hooks;
  hooks.on_candidate = [&](const rewrite::CandidateEvent& ev) {
    using Outcome = rewrite::CandidateEvent::Outcome;
    const bool mine = ev.rule == rule_index && ev.root == node;
    if (ev.outcome == Outcome::Applied) {
      root_ids[{ev.rule, ev.root}] = work.node(ev.root).id;
      for (NodeId n : ev.emb->nodes) seen.emplace(n, node_desc(work, n));
    }
    std::string round = "round " + std::to_string(ev.round) + ": ";
    if (mine && ev.outcome == Outcome::Applied) {
      if (fired == 0) fired = ev.round;
      out += round + (ev.gate_detail.empty() ? "applied" : std::string(ev.gate_detail) + ", applied") + "\n";
    } else if (mine && ev.outcome == Outcome::Declined) {
      declined = "not applied: " + std::string(ev.gate_detail);
      out += round + "matched, but " + declined + "\n";
    } else if (mine && ev.outcome == Outcome::Conflict) {
      std::string winner = rules[ev.winner_rule].label() + " at '" + root_ids[{ev.winner_rule, ev.winner_root}] + "'";
      lost = "lost a conflict to " + winner;
      out += round + "matched, but lost a conflict over " + seen[ev.shared] + " to " + winner + " (" +
             (o.gate ? std::string("with a target, the larger estimated saving goes first")
                     : why_first(rules, ev.winner_rule, rule_index)) +
             ")\n";
    } else if (mine) {
      out += round + "matched, but a node it reads changed earlier in the round; retried next round\n";
    } else if (ev.outcome == Outcome::Applied && fired == 0 &&
               std::find(ev.emb->nodes.begin(), ev.emb->nodes.end(), node) != ev.emb->nodes.end()) {
      std::string how = ev.root == node ? "as the root of its match" : "inside the match rooted at '" + work.node(ev.root).id + "'";
      out += round + "node '" + g.node(node).id + "' is rewritten by " + rules[ev.rule].label() + " (" + how + ")\n";
      if (taken_by.empty()) taken_by = rules[ev.rule].label() + " in round " + std::to_string(ev.round);
    }
  };
  RewriteReport rep = rewrite::run_driver(work, rules, o, &hooks);
  if (!rep.converged) out += "the run stopped without a fixed point: " + rep.stop_reason + "\n";

  std::string verdict;
  if (!runs) {
    verdict = "does not fire: the rule does not run (" +
              std::string(rule->enabled ? "not among the rules selected" : "it is disabled, enabled: false") + ")";
  } else if (fired) {
    verdict = "fires in round " + std::to_string(fired);
  } else if (!lost.empty()) {
    verdict = "does not fire: " + lost;
  } else if (!declined.empty()) {
    verdict = "does not fire: " + declined;
  } else if (before.kind != Analysis::Kind::Legal) {
    verdict = "does not fire: " + before.short_reason;
  } else if (!taken_by.empty()) {
    verdict = "does not fire: the node is rewritten first by " + taken_by;
  } else if (rep.rounds > 0 && work.alive(node)) {
    // Other rewrites may have changed the neighbourhood: the final graph is what the
    // rule last saw.
    Analysis after = analyse(work, *rule, node);
    out += "after " + std::to_string(rep.rounds) + (rep.rounds == 1 ? " round: " : " rounds: ") + after.short_reason +
           "\n" + after.detail;
    verdict = "does not fire: " + after.short_reason;
  } else {
    verdict = "does not fire: " + before.short_reason;
  }
  return out + "verdict: " + verdict + "\n";
}

}  // namespace graphfuse
