// The scale benchmark's cases: generate, rewrite, apply (load + rewrite + save), VF2.
#include "scale_cases.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "graphfuse/cost.h"
#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/target.h"
#include "match/matcher.h"
#include "proc_stats.h"
#include "vf2_baseline.h"

namespace graphfuse::bench {

namespace {

Graph generate(const CaseArgs& a) {
  if (!a.form.empty()) {
    auto f = fanout_form(a.form);
    if (!f) throw Error("unknown fan-out form '" + a.form + "' (chains, weights, shapes)");
    return generate_fanout_graph(FanoutOptions{a.nodes, *f, 1000});
  }
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

std::string find_mlir_opt() {
  if (const char* env = std::getenv("MLIR_OPT")) return env;
  for (const char* p : {"/usr/bin/mlir-opt-14", "/usr/lib/llvm-14/bin/mlir-opt"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

Figures case_generate(const CaseArgs& a) {
  auto t0 = Clock::now();
  Graph g = generate(a);
  double gen_ms = ms_since(t0);
  if (!a.mlir.empty()) write_mlir(g, a.mlir);
  auto t1 = Clock::now();
  save_graph(g, a.output);
  return {{"nodes", static_cast<double>(g.size())}, {"gen_ms", gen_ms}, {"save_ms", ms_since(t1)}};
}

void give_shapes(Graph& g) {
  const OpType in_op = OpType::intern(ops::kInput), const_op = OpType::intern(ops::kConst);
  auto weight_dim = [&](const Node& n, bool last) -> std::int64_t {
    if (n.inputs.size() < 2 || !n.inputs[1].valid()) return -1;
    const auto* s = g.node(n.inputs[1].node).attrs.get_if<std::vector<std::int64_t>>("shape");
    if (!s || s->size() < 2) return -1;
    return last ? s->back() : (*s)[s->size() - 2];
  };
  auto set = [&](NodeId n, std::int64_t c) {
    ValueType& t = g.output_infos(n).at(0).type;
    t.dtype = DType::Float32;
    t.shape = {1, 14, 14, c};
    t.shape_known = true;
  };
  for (NodeId n : g.topological_order()) {
    const Node& node = g.node(n);
    if (node.op == const_op || node.outputs.empty()) continue;
    if (node.op == in_op) {
      std::int64_t c = 8;  // the input channels: what a consumer's weight expects
      for (const Use& u : g.uses(n))
        if (std::int64_t w = weight_dim(g.node(u.node), false); w > 0) c = w;
      set(n, c);
      continue;
    }
    std::int64_t c = weight_dim(node, true);
    if (c <= 0 && !node.inputs.empty() && node.inputs[0].valid()) {
      const ValueType& in = g.node(node.inputs[0].node).outputs.at(node.inputs[0].port).type;
      c = in.shape_known ? in.shape.back() : 8;
    }
    set(n, c);
  }
}

Figures case_rewrite(const CaseArgs& a) {
  RuleSet rules = load_rule_files(a.rules);
  RewriteOptions opt;
  opt.threads = a.threads;
  if (a.in_order) opt.parallel_apply_from = SIZE_MAX;
  // With a target, every legal match is put to its cost model, as `apply --target` does.
  if (!a.target.empty()) opt.gate = make_target_gate(std::make_shared<const CostModel>(load_target(a.target)), true, false);
  Figures f;
  Samples times;
  std::size_t rss0 = current_rss();
  for (int rep = 0; rep < a.reps; ++rep) {
    // From a file when given (a 10^7-node graph loads in seconds but takes half a
    // minute to generate); the rewrite changes the graph, so each run gets a fresh one.
    Graph g = a.input.empty() ? generate(a) : load_graph(a.input);
    if (a.shapes) give_shapes(g);
    if (rep == 0) f["graph_bytes"] = static_cast<double>(current_rss() - rss0);
    // The apply phase (selecting and applying, after ordering) runs on this thread: its
    // CPU time is this thread's between the Apply notice and the next Match notice or
    // the end. Notices come per round and every 4096 matches, so they cost nothing.
    // The process's CPU time over the same spans counts the other threads too (they
    // apply groups of matches side by side when the round allows it; docs/rewriter.md).
    double apply_cpu = 0, apply_from = -1, apply_all_cpu = 0, apply_all_from = 0;
    opt.progress = [&](const RewriteProgress& p) {
      if (p.phase == RewriteProgress::Phase::Apply && p.done == 0) {
        apply_from = thread_cpu_ms();
        apply_all_from = cpu_ms();
      }
      if (p.phase == RewriteProgress::Phase::Match && apply_from >= 0) {
        apply_cpu += thread_cpu_ms() - apply_from;
        apply_all_cpu += cpu_ms() - apply_all_from;
        apply_from = -1;
      }
    };
    auto t0 = Clock::now();
    double c0 = cpu_ms(), m0 = thread_cpu_ms();
    RewriteReport r = rewrite_graph(g, rules, opt);
    double total = ms_since(t0);
    const double cpu = cpu_ms() - c0, main_cpu = thread_cpu_ms() - m0;
    if (apply_from >= 0) {
      apply_cpu += thread_cpu_ms() - apply_from;
      apply_all_cpu += cpu_ms() - apply_all_from;
    }
    times.add("rewrite_cpu_ms", cpu);
    // Per thread: the calling thread (it applies, and matches alongside the others).
    times.add("rewrite_main_cpu_ms", main_cpu);
    times.add("rewrite_other_cpu_ms", cpu - main_cpu);
    times.add("apply_cpu_ms", apply_cpu);
    times.add("apply_other_cpu_ms", apply_all_cpu - apply_cpu);
    double match = 0, apply = 0, ordering = 0, grouping = 0;
    std::size_t groups = 0;
    for (const RoundStats& s : r.per_round) {
      match += s.match_ms;
      apply += s.apply_ms;
      ordering += s.order_ms;
      grouping += s.group_ms;
      groups += s.apply_groups;
    }
    std::size_t rewrites = 0, declined = 0;
    double saving = 0;
    for (const RuleStats& s : r.rules) {
      rewrites += s.applied;
      saving += s.saving;
      for (const auto& d : s.declined) declined += d.second;
    }
    if (!a.target.empty()) {
      f["gate_saving_ms"] = saving;
      f["gate_declined"] = static_cast<double>(declined);
    }
    f["nodes"] = static_cast<double>(r.nodes_before);
    f["nodes_after"] = static_cast<double>(r.nodes_after);
    f["rounds"] = r.rounds;
    f["rewrites"] = static_cast<double>(rewrites);
    f["apply_groups"] = static_cast<double>(groups);
    times.add("rewrite_ms", total);
    times.add("match_ms", match);
    times.add("apply_ms", apply);
    // The apply phase's ordering and grouping (RoundStats::order_ms, group_ms); apply_ms
    // minus both is the applying itself.
    times.add("apply_order_ms", ordering);
    times.add("apply_group_ms", grouping);
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
  double faults0 = minor_faults();
  RuleSet rules = load_rule_files(a.rules);
  Graph g = load_graph(a.input);
  f["load_ms"] = ms_since(t0);
  f["load_cpu_ms"] = cpu_ms() - c0;
  f["load_faults"] = minor_faults() - faults0;
  f["graph_bytes"] = static_cast<double>(current_rss() - rss0);
  f["load_peak_bytes"] = static_cast<double>(peak_rss());
  // Each phase's own peak, so that the table can say which phase sets the process's.
  bool phases = reset_peak_rss();
  RewriteOptions opt;
  opt.threads = a.threads;
  if (a.in_order) opt.parallel_apply_from = SIZE_MAX;
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

void write_mlir(const Graph& g, const std::string& path) {
  std::ofstream out(path);
  auto name = [&g](ValueRef v) { return "%" + g.node(v.node).id; };
  const OpType in_op = OpType::intern(ops::kInput), const_op = OpType::intern(ops::kConst);
  out << "func @main(";
  for (std::size_t i = 0; i < g.inputs().size(); ++i)
    out << (i ? ", " : "") << name({g.inputs()[i], 0}) << ": i64";
  out << ") -> i64 {\n";
  const std::map<std::string_view, const char*> arith{{"Mul", "arith.muli"}, {"Add", "arith.addi"},
                                                      {"Xor", "arith.xori"}};
  std::string line;
  for (NodeId n = 0; n < g.capacity(); ++n) {
    if (!g.alive(n) || g.op(n) == in_op) continue;
    const Node& nd = g.node(n);
    line = "  %" + nd.id + " = ";
    if (nd.op == const_op) {
      const Tensor* t = constant_tensor(g, {n, 0});
      if (!t || t->dtype != DType::Int64 || t->num_elements() != 1) throw Error("write_mlir: '" + nd.id + "' is no int64 scalar");
      line += "arith.constant " + std::to_string(*t->as<std::int64_t>()) + " : i64\n";
    } else {
      auto op = arith.find(nd.op.name());
      if (op == arith.end() || nd.inputs.size() != 2) throw Error("write_mlir: no arith op for '" + nd.id + "'");
      line += std::string(op->second) + " " + name(nd.inputs[0]) + ", " + name(nd.inputs[1]) + " : i64\n";
    }
    out << line;
  }
  out << "  return " << name(g.outputs().at(0)) << " : i64\n}\n";
  if (!out) throw Error("cannot write " + path);
}

namespace {

/// Runs `cmd` (stderr folded into stdout) and returns what it printed; `f` gets the whole
/// process's wall time, CPU time (user + system) and peak resident memory, start and exit
/// included. This process is a fresh `--case` child that waits for nothing else, so the
/// children's rusage is the command's.
std::string run_timed(const std::string& cmd, Figures& f) {
  auto t0 = Clock::now();
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw Error("cannot run " + cmd);
  std::string all;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) all += buf;
  int rc = ::pclose(p);
  f["process_ms"] = ms_since(t0);
  if (rc != 0) throw Error("failed (" + std::to_string(rc) + "): " + cmd + "\n" + all);
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  auto ms = [](timeval t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  f["process_cpu_ms"] = ms(u.ru_utime) + ms(u.ru_stime);
  f["peak_bytes"] = static_cast<double>(u.ru_maxrss) * 1024;  // the largest child: the command
  return all;
}

/// The graphfuse CLI next to this benchmark (build/graphfuse beside build/bench/).
std::string graphfuse_cli() {
  auto exe = std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "graphfuse";
  if (!std::filesystem::exists(exe)) throw Error(exe.string() + " is missing (cmake --build BUILD --target graphfuse)");
  return exe.string();
}

}  // namespace

Figures case_mlir(const CaseArgs& a) {
  Figures f;
  std::string mlir_opt = find_mlir_opt();
  if (mlir_opt.empty())
    throw Error("mlir-opt not found: install Debian's mlir-14-tools (apt-get install mlir-14-tools) or set MLIR_OPT");
  std::string out = run_timed("'" + mlir_opt + "' --canonicalize -mlir-timing '" + a.input + "' -o /dev/null", f);
  // -mlir-timing's lines: "    0.0164 ( 99.0%)  Parser" (seconds, share, name)
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ss(line);
    double sec = 0;
    std::string pct, pct2, name;
    if (!(ss >> sec >> pct)) continue;
    if (pct.back() != ')') ss >> pct2;
    std::getline(ss, name);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "Parser") f["parse_ms"] = sec * 1e3;
    else if (name == "Canonicalizer") f["canonicalize_ms"] = sec * 1e3;
    else if (name == "Output") f["output_ms"] = sec * 1e3;
    else if (name == "Total") f["timing_total_ms"] = sec * 1e3;
  }
  if (!f.count("canonicalize_ms")) throw Error("mlir-opt printed no Canonicalizer timing:\n" + out);
  f["nodes"] = static_cast<double>(a.nodes);
  return f;
}

Figures case_cli(const CaseArgs& a) {
  std::string cmd = "'" + graphfuse_cli() + "' apply --threads " + std::to_string(a.threads);
  for (const auto& r : a.rules) cmd += " --rules '" + r + "'";
  cmd += " '" + a.input + "' -o '" + a.output + "'";
  Figures f;
  std::string out = run_timed(cmd, f);
  // "time: load 12.34 ms, rewrite 5.67 ms, save 8.90 ms"
  auto at = out.find("time: load ");
  double load = 0, rewrite = 0, save = 0;
  if (at == std::string::npos ||
      std::sscanf(out.c_str() + at, "time: load %lf ms, rewrite %lf ms, save %lf ms", &load, &rewrite, &save) != 3)
    throw Error("graphfuse apply printed no time line:\n" + out);
  f["load_ms"] = load;
  f["rewrite_ms"] = rewrite;
  f["save_ms"] = save;
  f["nodes"] = static_cast<double>(a.nodes);
  return f;
}

Figures case_vf2(const CaseArgs& a) {
  RuleSet rules = load_rule_files(a.rules);
  Graph g = generate(a);
  std::vector<NodeId> all = g.nodes();
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
    std::vector<NodeId> vf2 = vf2_roots(g, *shape);
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
