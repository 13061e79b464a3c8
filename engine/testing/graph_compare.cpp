// Structural graph comparison with a readable diff (rule-file tests, round trips).
#include <deque>
#include <unordered_map>

#include "graphfuse/compare.h"
#include "graphfuse/io.h"

namespace graphfuse {

namespace {

bool is_placeholder(std::string_view id) { return !id.empty() && id[0] == '_'; }

std::string value_text(const Graph& g, ValueRef v) {
  if (!v.valid()) return "_";
  return g.value_name(v);
}

std::string node_line(const Graph& g, NodeId n) { return format_node_text(g, n); }

class Comparer {
 public:
  Comparer(const Graph& e, const Graph& a) : e_(e), a_(a) {}

  GraphComparison run() {
    if (e_.outputs().size() != a_.outputs().size())
      diff("graph outputs: expected " + std::to_string(e_.outputs().size()) + ", got " +
           std::to_string(a_.outputs().size()));
    for (std::size_t i = 0; i < std::min(e_.outputs().size(), a_.outputs().size()); ++i)
      pair_values(e_.outputs()[i], a_.outputs()[i], "graph output " + std::to_string(i));
    drain();
    // Nodes no output depends on: pair by id.
    e_.for_each_node([&](NodeId en) {
      if (e2a_.count(en)) return;
      auto an = a_.find(e_.node(en).id);
      if (an && !a2e_.count(*an)) {
        enqueue(en, *an);
        drain();
      }
    });
    e_.for_each_node([&](NodeId en) {
      if (!e2a_.count(en)) diff("missing node '" + e_.node(en).id + "'", node_line(e_, en), "");
    });
    a_.for_each_node([&](NodeId an) {
      if (!a2e_.count(an)) diff("unexpected node '" + a_.node(an).id + "'", "", node_line(a_, an));
    });
    return std::move(out_);
  }

 private:
  void diff(std::string what, std::string el = {}, std::string al = {}) {
    out_.differences.push_back({std::move(what), std::move(el), std::move(al)});
  }

  void pair_values(ValueRef ev, ValueRef av, const std::string& where) {
    if (ev.valid() != av.valid()) {
      diff(where + ": expected " + value_text(e_, ev) + ", got " + value_text(a_, av));
      return;
    }
    if (!ev.valid()) return;
    if (ev.port != av.port) {
      diff(where + ": expected output " + std::to_string(ev.port) + " of its producer, got output " +
           std::to_string(av.port), node_line(e_, ev.node), node_line(a_, av.node));
      return;
    }
    enqueue(ev.node, av.node, where);
  }

  void enqueue(NodeId en, NodeId an, const std::string& where = {}) {
    auto ei = e2a_.find(en);
    auto ai = a2e_.find(an);
    if (ei != e2a_.end() || ai != a2e_.end()) {
      if (ei == e2a_.end() || ei->second != an)
        diff(where + ": expected node '" + e_.node(en).id + "', got node '" + a_.node(an).id +
             "' (the graphs share values differently)", node_line(e_, en), node_line(a_, an));
      return;
    }
    e2a_[en] = an;
    a2e_[an] = en;
    queue_.emplace_back(en, an);
  }

  void drain() {
    while (!queue_.empty()) {
      auto [en, an] = queue_.front();
      queue_.pop_front();
      compare_nodes(en, an);
    }
  }

  void compare_nodes(NodeId en, NodeId an) {
    const Node& e = e_.node(en);
    const Node& a = a_.node(an);
    std::string name = "node '" + e.id + "'";
    std::size_t before = out_.differences.size();
    auto show = [&](std::string what) { diff(name + ": " + what); };
    if (!is_placeholder(e.id) && e.id != a.id) show("id: expected '" + e.id + "', got '" + a.id + "'");
    if (e.op != a.op) show("op: expected " + std::string(e.op.name()) + ", got " + std::string(a.op.name()));
    for (const auto& [k, v] : e.attrs) {
      const AttrValue* o = a.attrs.find(k);
      if (!o) show("attribute '" + k + "': expected " + format_attr_value(v) + ", missing");
      else if (!(*o == v))
        show("attribute '" + k + "': expected " + format_attr_value(v) + ", got " + format_attr_value(*o));
    }
    for (const auto& [k, v] : a.attrs)
      if (!e.attrs.has(k) && !is_placeholder(k))
        show("attribute '" + k + "': not expected, got " + format_attr_value(v));
    if (e.outputs.size() != a.outputs.size())
      show("outputs: expected " + std::to_string(e.outputs.size()) + ", got " + std::to_string(a.outputs.size()));
    if (e.inputs.size() != a.inputs.size())
      show("inputs: expected " + std::to_string(e.inputs.size()) + ", got " + std::to_string(a.inputs.size()));
    // Show both nodes once, on the first difference found for this pair.
    if (out_.differences.size() > before) {
      out_.differences[before].expected_line = node_line(e_, en);
      out_.differences[before].actual_line = node_line(a_, an);
    }
    if (e.op != a.op) return;  // inputs of different ops would only add noise
    for (std::size_t i = 0; i < std::min(e.inputs.size(), a.inputs.size()); ++i)
      pair_values(e.inputs[i], a.inputs[i], name + " input " + std::to_string(i));
  }

  const Graph& e_;
  const Graph& a_;
  std::unordered_map<NodeId, NodeId> e2a_, a2e_;
  std::deque<std::pair<NodeId, NodeId>> queue_;
  GraphComparison out_;
};

}  // namespace

std::string GraphComparison::render() const {
  std::string s;
  for (const GraphDifference& d : differences) {
    s += "  " + d.what + "\n";
    if (!d.expected_line.empty()) s += "    - " + d.expected_line + "\n";
    if (!d.actual_line.empty()) s += "    + " + d.actual_line + "\n";
  }
  return s;
}

GraphComparison compare_graphs(const Graph& expected, const Graph& actual) {
  return Comparer(expected, actual).run();
}

}  // namespace graphfuse
