// Counting ops and rule applications for rule tests on whole models.
#include "testing/case_expectations.h"

#include <map>

#include "graphfuse/io.h"

namespace graphfuse::testing {

namespace {

std::map<std::string, std::int64_t, std::less<>> op_counts(const Graph& g) {
  std::map<std::string, std::int64_t, std::less<>> out;
  g.for_each_node([&](NodeId n) { ++out[std::string(g.node(n).op.name())]; });
  return out;
}

// A node as the test sees it: op, inputs by name and attributes (provenance `_` ones
// left out: the rewriter adds `_rule` only to nodes it made).
std::string node_text(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  std::string s = std::string(node.op.name()) + "(";
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    s += (i ? ", " : "") + (node.inputs[i].valid() ? g.value_name(node.inputs[i]) : std::string("_"));
  s += ")";
  for (const auto& [key, value] : node.attrs)
    if (key.empty() || key[0] != '_') s += " " + std::string(key) + "=" + format_attr_value(value);
  return s;
}

}  // namespace

std::string check_expected_counts(const RuleTestCase& tc, const Graph& input, const Graph& actual,
                                  const RewriteReport& report) {
  std::string out;
  auto counts = op_counts(actual);
  for (const auto& [op, want] : tc.expect_counts) {
    auto it = counts.find(op);
    std::int64_t got = it == counts.end() ? 0 : it->second;
    if (got != want) out += "  expect_counts: " + op + ": expected " + std::to_string(want) + ", got " + std::to_string(got) + "\n";
  }
  for (const auto& [rule, want] : tc.expect_applied) {
    const RuleStats* stats = nullptr;
    for (const RuleStats& r : report.rules) stats = r.rule == rule ? &r : stats;
    if (!stats) {
      out += "  expect_applied: no rule '" + rule + "' ran in this case\n";
      continue;
    }
    auto got = static_cast<std::int64_t>(stats->applied);
    if (got != want) out += "  expect_applied: " + rule + ": expected " + std::to_string(want) + ", got " + std::to_string(got) + "\n";
  }
  for (const std::string& op : tc.expect_unchanged_ops) {
    // Every input node of the op is still there under its id, reading the same values
    // with the same attributes, and no node of the op was added.
    std::size_t before = 0;
    std::string first_change;
    input.for_each_node([&](NodeId n) {
      if (input.node(n).op.name() != op) return;
      ++before;
      auto m = actual.find(input.node(n).id);
      std::string want = node_text(input, n);
      std::string got = m ? node_text(actual, *m) : "(removed)";
      if (first_change.empty() && want != got) first_change = "'" + input.node(n).id + "' was " + want + ", is " + got;
    });
    auto it = counts.find(op);
    std::size_t after = it == counts.end() ? 0 : static_cast<std::size_t>(it->second);
    if (!first_change.empty()) out += "  expect_unchanged_ops: " + op + ": " + first_change + "\n";
    else if (after != before)
      out += "  expect_unchanged_ops: " + op + ": " + std::to_string(before) + " in the input, " + std::to_string(after) + " after\n";
  }
  return out;
}

void elide_weights(Graph& g) {
  g.for_each_node([&](NodeId n) {
    const Tensor* t = g.node(n).attrs.get_if<Tensor>("value");
    if (!t || !t->has_data()) return;
    Tensor shape_only = *t;
    shape_only.data.reset();
    Attributes a = g.node(n).attrs;
    a.set("value", std::move(shape_only));
    g.set_attrs(n, std::move(a));
  });
}

}  // namespace graphfuse::testing
