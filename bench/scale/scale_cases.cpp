// The scale benchmark's cases: generate, rewrite, apply (load + rewrite + save), VF2.
#include "scale_cases.h"

#include <algorithm>
#include <iostream>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "match/matcher.h"
#include "proc_stats.h"
#include "vf2_baseline.h"

namespace graphfuse::bench {

namespace {

Graph generate(const CaseArgs& a) {
  GenerateOptions opt{a.nodes, 1, true};
  if (a.shape == "wide") opt.shape = GraphShape::Wide;
  else if (a.shape != "cnn") throw Error("unknown graph shape '" + a.shape + "' (cnn, wide)");
  return generate_cnn_graph(opt);
}

double keep_min(double best, double x) { return best == 0 ? x : std::min(best, x); }

/// Timings of repeated runs: the median goes under `key`, the fastest and slowest
/// under key_min and key_max, so a table can show the spread.
class Samples {
 public:
  void add(const std::string& key, double x) { v_[key].push_back(x); }
  void put(Figures& f) const {
    for (auto [key, xs] : v_) {
      std::sort(xs.begin(), xs.end());
      std::size_t n = xs.size();
      f[key] = n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
      f[key + "_min"] = xs.front();
      f[key + "_max"] = xs.back();
    }
  }

 private:
  std::map<std::string, std::vector<double>> v_;
};

}  // namespace

Figures case_generate(const CaseArgs& a) {
  auto t0 = Clock::now();
  Graph g = generate(a);
  double gen_ms = ms_since(t0);
  auto t1 = Clock::now();
  save_graph(g, a.output);
  return {{"nodes", static_cast<double>(g.size())}, {"gen_ms", gen_ms}, {"save_ms", ms_since(t1)}};
}

Figures case_rewrite(const CaseArgs& a) {
  RuleSet rules = load_rule_files(a.rules);
  RewriteOptions opt;
  opt.threads = a.threads;
  Figures f;
  Samples times;
  std::size_t rss0 = current_rss();
  for (int rep = 0; rep < a.reps; ++rep) {
    // From a file when given (a 10^7-node graph loads in seconds but takes half a
    // minute to generate); the rewrite changes the graph, so each run gets a fresh one.
    Graph g = a.input.empty() ? generate(a) : load_graph(a.input);
    if (rep == 0) f["graph_bytes"] = static_cast<double>(current_rss() - rss0);
    auto t0 = Clock::now();
    double c0 = cpu_ms();
    RewriteReport r = rewrite_graph(g, rules, opt);
    double total = ms_since(t0);
    times.add("rewrite_cpu_ms", cpu_ms() - c0);
    double match = 0, apply = 0;
    for (const RoundStats& s : r.per_round) {
      match += s.match_ms;
      apply += s.apply_ms;
    }
    std::size_t rewrites = 0;
    for (const RuleStats& s : r.rules) rewrites += s.applied;
    f["nodes"] = static_cast<double>(r.nodes_before);
    f["nodes_after"] = static_cast<double>(r.nodes_after);
    f["rounds"] = r.rounds;
    f["rewrites"] = static_cast<double>(rewrites);
    times.add("rewrite_ms", total);
    times.add("match_ms", match);
    times.add("apply_ms", apply);
    times.add("round1_match_ms", r.per_round.front().match_ms);
  }
  times.put(f);
  f["peak_bytes"] = static_cast<double>(peak_rss());
  return f;
}

Figures case_apply(const CaseArgs& a) {
  Figures f;
  std::size_t rss0 = current_rss();
  auto t0 = Clock::now();
  double c0 = cpu_ms();
  RuleSet rules = load_rule_files(a.rules);
  Graph g = load_graph(a.input);
  f["load_ms"] = ms_since(t0);
  f["load_cpu_ms"] = cpu_ms() - c0;
  f["graph_bytes"] = static_cast<double>(current_rss() - rss0);
  f["load_peak_bytes"] = static_cast<double>(peak_rss());
  // Each phase's own peak, so that the table can say which phase sets the process's.
  bool phases = reset_peak_rss();
  RewriteOptions opt;
  opt.threads = a.threads;
  auto t1 = Clock::now();
  double c1 = cpu_ms();
  RewriteReport r = rewrite_graph(g, rules, opt);
  f["rewrite_ms"] = ms_since(t1);
  f["rewrite_cpu_ms"] = cpu_ms() - c1;
  if (phases) f["rewrite_peak_bytes"] = static_cast<double>(peak_rss());
  f["rewrite_end_bytes"] = static_cast<double>(current_rss());
  phases = phases && reset_peak_rss();
  auto t2 = Clock::now();
  double c2 = cpu_ms();
  save_graph(g, a.output);
  f["save_ms"] = ms_since(t2);
  f["save_cpu_ms"] = cpu_ms() - c2;
  f["total_ms"] = ms_since(t0);
  if (phases) f["save_peak_bytes"] = static_cast<double>(peak_rss());
  f["nodes"] = static_cast<double>(r.nodes_before);
  f["nodes_after"] = static_cast<double>(r.nodes_after);
  f["start_bytes"] = static_cast<double>(rss0);
  // VmHWM was reset between phases: the process's peak is the largest phase peak.
  f["peak_bytes"] = std::max({f["load_peak_bytes"], f["rewrite_peak_bytes"], f["save_peak_bytes"],
                              static_cast<double>(peak_rss())});
  return f;
}

Figures case_vf2(const CaseArgs& a) {
  RuleSet rules = load_rule_files(a.rules);
  Graph g = generate(a);
  std::vector<NodeId> all = g.nodes();
  BoostGraph big = boost_snapshot(g);  // built once, outside the timings
  Figures f{{"nodes", static_cast<double>(g.size())}, {"vf2_ms", 0}, {"match_ms", 0}, {"roots", 0},
            {"rules", 0}, {"skipped", 0}};
  for (std::uint32_t r : rules.enabled()) {
    std::string why;
    auto shape = pattern_shape(rules[r].compiled->match, &why);
    if (!shape) {
      std::cerr << "vf2: skipping " << rules[r].label() << ": " << why << "\n";
      f["skipped"] += 1;
      continue;
    }
    auto t0 = Clock::now();
    std::vector<NodeId> vf2 = vf2_roots(big, *shape);
    f["vf2_ms"] += ms_since(t0);

    // The matcher's candidate roots before legality: accept every embedding.
    std::vector<char> active(rules.size(), 0);
    active[r] = 1;
    match::Acceptor accept_all = [](std::uint32_t, const match::Embedding&) { return -1; };
    std::vector<NodeId> ours;
    double best = 0;
    for (int rep = 0; rep < a.reps; ++rep) {
      auto t1 = Clock::now();
      match::MatchResults m = match::find_matches(g, rules, active, all, accept_all, nullptr);
      best = keep_min(best, ms_since(t1));
      ours.clear();
      for (const match::Found& x : m.found) ours.push_back(x.root);
    }
    f["match_ms"] += best;
    std::sort(ours.begin(), ours.end());
    if (ours != vf2)
      throw Error("vf2: " + rules[r].label() + ": VF2 finds " + std::to_string(vf2.size()) +
                  " roots, the matcher " + std::to_string(ours.size()));
    f["roots"] += static_cast<double>(ours.size());
    f["rules"] += 1;
  }
  return f;
}

}  // namespace graphfuse::bench
