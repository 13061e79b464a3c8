// Names of reject reasons and stop kinds, and the rewrite report as text and as JSON.
#include <cstdio>
#include <string>

#include "graphfuse/rewrite.h"

namespace graphfuse {

std::string_view reject_reason_name(RejectReason r) {
  switch (r) {
    case RejectReason::ExternalUse: return "external_use";
    case RejectReason::GraphOutput: return "graph_output";
    case RejectReason::LeafOverlap: return "leaf_overlap";
    case RejectReason::MissingAttribute: return "missing_attribute";
    case RejectReason::ErasedOutput: return "erased_output";
    case RejectReason::Conflict: return "conflict";
    case RejectReason::Stale: return "stale";
    case RejectReason::Cycle: return "cycle";
  }
  return "?";
}

std::string_view stop_kind_name(StopKind k) {
  switch (k) {
    case StopKind::FixedPoint: return "fixed_point";
    case StopKind::MaxRounds: return "max_rounds";
    case StopKind::Oscillation: return "oscillation";
    case StopKind::Growth: return "growth";
  }
  return "?";
}

namespace {

// "rules/seed.yaml:4 conv2d_biasadd_relu", the way Rule::label() names a rule.
std::string label(const RuleStats& s) {
  if (s.loc.file.empty()) return s.rule;
  return s.loc.file + ":" + std::to_string(s.loc.line) + " " + s.rule;
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string pad_left(const std::string& s, std::size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }
std::string pad_right(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

// With a gate (--target): per rule that it saw, the estimated saving of what was applied
// and the declined matches by reason.
static std::string format_gate_stats(const RewriteReport& rep) {
  std::string out;
  for (const RuleStats& s : rep.rules) {
    if (s.declined.empty() && s.applied == 0) continue;
    std::size_t declined = 0;
    std::string why;
    for (const auto& [reason, n] : s.declined) {
      declined += n;
      why += (why.empty() ? " (" : "; ") + reason + " " + std::to_string(n);
    }
    char saved[64];
    std::snprintf(saved, sizeof saved, "%.3f", s.saving);
    out += "target: " + s.rule + ": applied " + std::to_string(s.applied) + ", est. saving " + saved + " ms; declined " +
           std::to_string(declined) + (why.empty() ? "" : why + ")") + "\n";
  }
  return out;
}

std::string format_stats(const RewriteReport& rep) {
  std::size_t w = 4;
  for (const RuleStats& s : rep.rules) w = std::max(w, label(s).size());
  std::string out = pad_right("rule", w) + "  candidates     matched     applied    match ms    apply ms  rejected\n";
  for (const RuleStats& s : rep.rules) {
    std::string rejected;
    for (std::size_t k = 0; k < kRejectReasons; ++k)
      if (s.rejected[k] != 0)
        rejected += (rejected.empty() ? "" : ", ") + std::string(reject_reason_name(static_cast<RejectReason>(k))) +
                    " " + std::to_string(s.rejected[k]);
    out += pad_right(label(s), w) + pad_left(std::to_string(s.candidates), 12) + pad_left(std::to_string(s.matched), 12) +
           pad_left(std::to_string(s.applied), 12) + pad_left(ms(s.match_ms), 12) + pad_left(ms(s.apply_ms), 12) + "  " +
           (rejected.empty() ? "-" : rejected) + "\n";
  }
  if (rep.gated) out += format_gate_stats(rep);
  out += "round  candidates     matched     applied       nodes    match ms    apply ms\n";
  for (std::size_t i = 0; i < rep.per_round.size(); ++i) {
    const RoundStats& r = rep.per_round[i];
    out += pad_left(std::to_string(i + 1), 5) + pad_left(std::to_string(r.candidates), 12) +
           pad_left(std::to_string(r.matched), 12) + pad_left(std::to_string(r.applied), 12) +
           pad_left(std::to_string(r.nodes), 12) + pad_left(ms(r.match_ms), 12) + pad_left(ms(r.apply_ms), 12) + "\n";
  }
  out += "stop: " + rep.stop_reason + " (" + std::to_string(rep.rounds) + (rep.rounds == 1 ? " round" : " rounds") +
         " applied rewrites; " + std::to_string(rep.nodes_before) + " -> " + std::to_string(rep.nodes_after) +
         " nodes; " + std::to_string(rep.threads) + (rep.threads == 1 ? " thread)" : " threads)") + "\n";
  return out;
}

std::string stats_json(const RewriteReport& rep) {
  std::string o = "{\n";
  o += "  \"converged\": " + std::string(rep.converged ? "true" : "false") + ",\n";
  o += "  \"stop\": " + json_string(stop_kind_name(rep.stop)) + ",\n";
  o += "  \"stop_reason\": " + json_string(rep.stop_reason) + ",\n";
  o += "  \"firing\": [";
  for (std::size_t i = 0; i < rep.firing.size(); ++i) o += (i ? ", " : "") + json_string(rep.firing[i]);
  o += "],\n";
  o += "  \"rounds\": " + std::to_string(rep.rounds) + ",\n";
  o += "  \"threads\": " + std::to_string(rep.threads) + ",\n";
  o += "  \"nodes_before\": " + std::to_string(rep.nodes_before) + ",\n";
  o += "  \"nodes_after\": " + std::to_string(rep.nodes_after) + ",\n";
  o += "  \"notes\": [";
  for (std::size_t i = 0; i < rep.notes.size(); ++i) o += (i ? ", " : "") + json_string(rep.notes[i]);
  o += "],\n";
  o += "  \"rules\": [";
  for (std::size_t i = 0; i < rep.rules.size(); ++i) {
    const RuleStats& s = rep.rules[i];
    o += std::string(i ? "," : "") + "\n    {\"rule\": " + json_string(s.rule) + ", \"loc\": " + json_string(s.loc.str()) +
         ", \"candidates\": " + std::to_string(s.candidates) + ", \"matched\": " + std::to_string(s.matched) +
         ", \"applied\": " + std::to_string(s.applied) + ", \"rejected\": {";
    for (std::size_t k = 0; k < kRejectReasons; ++k)
      o += std::string(k ? ", " : "") + json_string(reject_reason_name(static_cast<RejectReason>(k))) + ": " +
           std::to_string(s.rejected[k]);
    o += "}, \"match_ms\": " + ms(s.match_ms) + ", \"apply_ms\": " + ms(s.apply_ms);
    if (rep.gated) {
      o += ", \"saving_ms\": " + ms(s.saving) + ", \"declined\": {";
      for (std::size_t k = 0; k < s.declined.size(); ++k)
        o += std::string(k ? ", " : "") + json_string(s.declined[k].first) + ": " + std::to_string(s.declined[k].second);
      o += "}";
    }
    o += "}";
  }
  o += rep.rules.empty() ? "],\n" : "\n  ],\n";
  o += "  \"per_round\": [";
  for (std::size_t i = 0; i < rep.per_round.size(); ++i) {
    const RoundStats& r = rep.per_round[i];
    o += std::string(i ? "," : "") + "\n    {\"round\": " + std::to_string(i + 1) + ", \"candidates\": " +
         std::to_string(r.candidates) + ", \"matched\": " + std::to_string(r.matched) + ", \"applied\": " +
         std::to_string(r.applied) + ", \"nodes\": " + std::to_string(r.nodes) + ", \"match_ms\": " + ms(r.match_ms) +
         ", \"apply_ms\": " + ms(r.apply_ms) + ", \"order_ms\": " + ms(r.order_ms) + ", \"group_ms\": " +
         ms(r.group_ms) + ", \"apply_groups\": " + std::to_string(r.apply_groups) + "}";
  }
  o += rep.per_round.empty() ? "]\n" : "\n  ]\n";
  return o + "}\n";
}

}  // namespace graphfuse
