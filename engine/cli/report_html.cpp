// The HTML report (cli/report_html.h). Pictures come from Graphviz (`dot -Tsvg`) and are inlined,
// as are the style sheet and a small script, so the file works offline and can be mailed.
#include "cli/report_html.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "graphfuse/io.h"

extern char** environ;

namespace graphfuse::cli {

namespace {

std::string html(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fixed(double v, int digits = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// Runs `dot -Tsvg` on `dot_text` and returns the <svg> element (prolog and doctype dropped).
std::string render_svg(const std::string& dot_text) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path();
  const std::string stem = "graphfuse-report-" + std::to_string(::getpid()) + "-" +
                           std::to_string(reinterpret_cast<std::uintptr_t>(&dot_text));
  const std::string in = (dir / (stem + ".dot")).string(), out = (dir / (stem + ".svg")).string();
  write_file_atomic(in, dot_text);
  std::vector<std::string> args = {"dot", "-Tsvg", in, "-o", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = 0;
  int err = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  if (err == 0) ::waitpid(pid, &status, 0);
  std::error_code ec;
  fs::remove(in, ec);
  if (err != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(out, ec);
    throw Error("report: Graphviz's `dot -Tsvg` failed (" + std::string(err ? "not installed?" : "exit status") +
                "); install the graphviz package");
  }
  std::string svg = read_file(out);
  fs::remove(out, ec);
  auto at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

std::map<std::string, std::size_t> histogram(const Graph& g) {
  std::map<std::string, std::size_t> h;
  g.for_each_node([&](NodeId n) { ++h[std::string(g.op(n).name())]; });
  return h;
}

/// A node a rule made, the original nodes it replaced, and the rule.
struct Fused {
  NodeId node = kNoNode;  // in `after`
  std::string rule;
  std::vector<NodeId> replaced;  // in `before`, in write order of discovery
};

/// The original nodes behind each node a rule made: from the root the rewrite took over (same
/// id) or derived its id from ("root/name"), back through inputs while the nodes are gone.
std::vector<Fused> fused_nodes(const Graph& before, const Graph& after) {
  std::vector<Fused> out;
  for (NodeId n : after.nodes()) {
    const std::string* rule = after.node(n).attrs.get_if<std::string>("_rule");
    if (!rule) continue;
    Fused f{n, *rule, {}};
    std::string id = after.node(n).id;
    std::optional<NodeId> root = before.find(id);
    while (!root) {
      auto slash = id.rfind('/');
      if (slash == std::string::npos || slash == 0) break;
      id.resize(slash);
      root = before.find(id);
    }
    if (root) {
      std::vector<NodeId> stack{*root};
      std::unordered_set<NodeId> seen{*root};
      if (!after.find(before.node(*root).id) || after.op(*after.find(before.node(*root).id)) != before.op(*root))
        f.replaced.push_back(*root);
      while (!stack.empty()) {
        NodeId x = stack.back();
        stack.pop_back();
        for (ValueRef v : before.node(x).inputs) {
          if (!v.valid() || !seen.insert(v.node).second || after.find(before.node(v.node).id)) continue;
          f.replaced.push_back(v.node);
          stack.push_back(v.node);
        }
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

/// Marks n and its direct producers and consumers.
void mark_with_neighbours(const Graph& g, NodeId n, std::vector<char>& only) {
  only[n] = 1;
  for (ValueRef v : g.node(n).inputs)
    if (v.valid()) only[v.node] = 1;
  for (const Use& u : g.uses(n)) only[u.node] = 1;
}

const char* kStyle = R"(
body{font-family:Helvetica,Arial,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}tr.target{outline:3px solid #e07000}
.graphs{display:flex;gap:1em;flex-wrap:wrap}.graph{flex:1 1 45%;min-width:320px;border:1px solid #ccc;overflow:auto;max-height:80vh}
.graph h3{margin:.3em .5em;font-size:1em}.graph svg{width:100%;height:auto}.graph.zoom svg{width:auto}.note{color:#805000;background:#fff6e0;padding:.4em .7em;border-left:4px solid #e0a000}
.swatch{display:inline-block;width:.9em;height:.9em;border:1px solid #888;vertical-align:middle;margin-right:.3em}
.pass{color:#070}.fail{color:#b00;font-weight:bold}code{font-size:.95em}
)";

// Checks its own links when loaded (the browser test reads the data-* results) and highlights
// the rule row of a clicked fused node.
const char* kScript = R"(
function countError() { document.body.dataset.errors = String(Number(document.body.dataset.errors || 0) + 1); }
window.addEventListener('error', countError);
var consoleError = console.error;
console.error = function () { countError(); consoleError.apply(console, arguments); };
document.addEventListener('DOMContentLoaded', function () {
  var ok = 0, broken = 0;
  document.querySelectorAll('svg a').forEach(function (a) {
    var href = a.getAttribute('xlink:href') || a.getAttribute('href') || '';
    if (href.indexOf('#rule-') !== 0) return;
    if (document.getElementById(href.slice(1))) ok++; else broken++;
    a.addEventListener('click', function () {
      document.querySelectorAll('tr.target').forEach(function (r) { r.classList.remove('target'); });
      var row = document.getElementById(href.slice(1));
      if (row) row.classList.add('target');
    });
  });
  // A double click on a picture toggles fit-to-width and natural size.
  document.querySelectorAll('.graph').forEach(function (g) {
    g.addEventListener('dblclick', function () { g.classList.toggle('zoom'); });
  });
  document.body.dataset.fusedLinks = String(ok);
  document.body.dataset.brokenLinks = String(broken);
  document.body.dataset.svgs = String(document.querySelectorAll('.graph svg').length);
  document.body.dataset.ready = '1';
});
)";

}  // namespace

std::string render_report(const std::string& input, const std::vector<std::string>& rule_files, const Graph& before,
                          const Graph& after, const RewriteReport& report, const ReportExtras& extras) {
  std::vector<Fused> fused = fused_nodes(before, after);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>graphfuse report: " << html(input)
    << "</title>\n<style>" << kStyle << "</style>\n<script>" << kScript << "</script></head>\n<body>\n";
  o << "<h1>graphfuse report: <code>" << html(input) << "</code></h1>\n<p>Rules:";
  for (const auto& r : rule_files) o << " <code>" << html(r) << "</code>";
  o << "</p>\n<p>Nodes " << report.nodes_before << " &rarr; " << after.size() << " (" << fused.size()
    << " nodes made by rules";
  if (extras.folded) o << ", " << extras.folded << " folded into constants";
  o << ") in " << report.rounds << " round" << (report.rounds == 1 ? "" : "s") << "; " << html(report.stop_reason)
    << ".</p>\n";
  if (!report.converged) o << "<p class=\"note\">The rules did not reach a fixed point: " << html(report.stop_reason) << "</p>\n";

  // Pictures: whole graphs when small, else the fused regions only.
  DotOptions dot;
  dot.rule_links = true;
  DotOptions dot_before = dot;
  const bool whole = before.size() <= kMaxDrawnNodes && after.size() <= kMaxDrawnNodes;
  std::size_t regions = 0;
  if (!whole) {
    dot.only.assign(after.capacity(), 0);
    dot_before.only.assign(before.capacity(), 0);
    for (const Fused& f : fused) {
      if (regions == kMaxDrawnRegions) break;
      ++regions;
      mark_with_neighbours(after, f.node, dot.only);
      for (NodeId r : f.replaced) mark_with_neighbours(before, r, dot_before.only);
    }
  }
  o << "<h2>Before and after</h2>\n";
  if (!whole)
    o << "<p class=\"note\">The graph has " << before.size() << " nodes, too many to draw whole: the pictures show "
      << regions << " of " << fused.size()
      << " fused regions (each node a rule made, the nodes it replaced, and their direct neighbours); "
         "unchanged regions are left out.</p>\n";
  o << "<p><small>Pictures fit the width; double-click one for its natural size. Nodes a rule made are "
       "coloured by rule and link to its row below.</small></p>\n";
  o << "<div class=\"graphs\">\n<div class=\"graph\" id=\"before\"><h3>Before</h3>\n"
    << render_svg(write_graph_dot(before, dot_before)) << "</div>\n<div class=\"graph\" id=\"after\"><h3>After</h3>\n"
    << render_svg(write_graph_dot(after, dot)) << "</div>\n</div>\n";

  // What each rule did.
  std::map<std::string, std::size_t> made;
  for (const Fused& f : fused) ++made[f.rule];
  o << "<h2>Rules</h2>\n<table><tr><th>rule</th><th>candidates</th><th>matched</th><th>applied</th>"
       "<th>nodes in result</th><th>rejected</th></tr>\n";
  for (const RuleStats& s : report.rules) {
    o << "<tr id=\"rule-" << html(s.rule) << "\"><td><span class=\"swatch\" style=\"background:" << rule_colour(s.rule)
      << "\"></span><code>" << html(s.rule) << "</code> <small>" << html(s.loc.str()) << "</small></td><td>"
      << s.candidates << "</td><td>" << s.matched << "</td><td>" << s.applied << "</td><td>" << made[s.rule]
      << "</td><td>";
    bool any = false;
    for (std::size_t r = 0; r < kRejectReasons; ++r)
      if (s.rejected[r]) {
        o << (any ? ", " : "") << reject_reason_name(static_cast<RejectReason>(r)) << " " << s.rejected[r];
        any = true;
      }
    o << "</td></tr>\n";
  }
  o << "</table>\n";

  // Each node a rule made and what it replaced.
  o << "<h2>Nodes made by rules</h2>\n";
  if (fused.empty()) o << "<p>None.</p>\n";
  else {
    o << "<table><tr><th>node</th><th>op</th><th>rule</th><th>replaced</th></tr>\n";
    std::size_t shown = 0;
    for (const Fused& f : fused) {
      if (++shown > 2000) {
        o << "<tr><td colspan=\"4\">... and " << fused.size() - 2000 << " more</td></tr>\n";
        break;
      }
      o << "<tr><td><code>" << html(after.node(f.node).id) << "</code></td><td>" << html(after.op(f.node).name())
        << "</td><td><a href=\"#rule-" << html(f.rule) << "\">" << html(f.rule) << "</a></td><td>";
      for (std::size_t i = 0; i < f.replaced.size(); ++i)
        o << (i ? ", " : "") << html(before.op(f.replaced[i]).name()) << " <code>"
          << html(before.node(f.replaced[i]).id) << "</code>";
      o << "</td></tr>\n";
    }
    o << "</table>\n";
  }

  // Op histograms.
  auto hb = histogram(before), ha = histogram(after);
  std::set<std::string> ops;
  for (const auto& [op, _] : hb) ops.insert(op);
  for (const auto& [op, _] : ha) ops.insert(op);
  o << "<h2>Ops</h2>\n<table><tr><th>op</th><th>before</th><th>after</th><th>change</th></tr>\n";
  for (const std::string& op : ops) {
    long b = static_cast<long>(hb.count(op) ? hb[op] : 0), a = static_cast<long>(ha.count(op) ? ha[op] : 0);
    o << "<tr><td><code>" << html(op) << "</code></td><td>" << b << "</td><td>" << a << "</td><td>"
      << (a - b > 0 ? "+" : "") << (a == b ? std::string() : std::to_string(a - b)) << "</td></tr>\n";
  }
  o << "<tr><th>all</th><th>" << before.size() << "</th><th>" << after.size() << "</th><th></th></tr></table>\n";

  if (extras.verify) {
    bool pass = true;
    for (const auto& c : *extras.verify) pass = pass && c.pass;
    o << "<h2>Numerical check: <span class=\"" << (pass ? "pass\">PASS" : "fail\">FAIL") << "</span></h2>\n<p>"
      << html(extras.verify_settings) << "</p>\n<table><tr><th>output</th><th>max |a-b|</th><th>max |reference|</th>"
      << "<th>result</th></tr>\n";
    for (const auto& c : *extras.verify)
      o << "<tr><td><code>" << html(c.name) << "</code></td><td>" << c.max_abs << "</td><td>" << c.max_ref
        << "</td><td class=\"" << (c.pass ? "pass\">pass" : "fail\">FAIL") << "</td></tr>\n";
    o << "</table>\n";
  }
  if (extras.bench_ms) {
    auto [b, a] = *extras.bench_ms;
    o << "<h2>Latency</h2>\n<p>" << html(extras.bench_settings) << "</p>\n<table><tr><th></th><th>median ms</th></tr>"
      << "<tr><td>before</td><td>" << fixed(b, 3) << "</td></tr><tr><td>after</td><td>" << fixed(a, 3)
      << "</td></tr><tr><td>speed-up</td><td>" << (a > 0 ? fixed(b / a, 2) + "x" : "-") << "</td></tr></table>\n";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace graphfuse::cli
