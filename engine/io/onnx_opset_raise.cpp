// Raising a graph's import of ONNX's default opset where that changes the meaning of none of
// its nodes (graphfuse/onnx.h raise_onnx_opset), so that rules guarded by `opset("") >= N`
// can emit ops that exist only from N on (LayerNormalization at 17) on older exports.
//
// Which version steps keep an op's meaning is libonnx's version converter's knowledge: it
// registers a CompatibleAdapter for every step that only adds types or optional attributes
// whose absence keeps the old behaviour (Pow 14->15, Shape 14->15, Where 15->16, ...), and
// real adapters where the meaning changes (RoiAlign 15->16: the default coordinate mode).
// graphfuse converts nothing itself: a graph with an op of the second kind stays as it is.
#include <memory>
#include <string>
#include <unordered_map>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"

namespace graphfuse {

namespace {

namespace vc = onnx::version_conversion;

// The converter's adapter table, which it keeps protected. Built once: the constructor
// copies every schema of every version.
class AdapterTable : public vc::DefaultVersionConverter {
 public:
  // Whether libonnx converts `op` from opset `from` to `from + 1` without touching it.
  bool compatible_step(const std::string& op, std::int64_t from) const {
    auto by_op = adapters.find(op);
    if (by_op == adapters.end()) return false;
    auto by_from = by_op->second.find(onnx::OpSetID(from).toString());
    if (by_from == by_op->second.end()) return false;
    auto by_to = by_from->second.find(onnx::OpSetID(from + 1).toString());
    return by_to != by_from->second.end() && dynamic_cast<const vc::CompatibleAdapter*>(by_to->second.get()) != nullptr;
  }
};

const AdapterTable& adapter_table() {
  static const AdapterTable table;
  return table;
}

// Steps whose libonnx adapter only checks the node: BatchNormalization 14 dropped the
// training outputs (the adapter refuses outputs 4 and 5) and gave outputs 2 and 3 to
// training_mode, so an inference node, Y alone, computes the same.
bool unchanged_for_node(const std::string& op, std::int64_t step_to, std::size_t outputs) {
  return op == "BatchNormalization" && step_to == 14 && outputs == 1;
}

bool default_domain(std::string_view d) { return d.empty() || d == "ai.onnx"; }

// Finds the first node whose meaning changes between two opsets. The verdict per op (and,
// for the one output-dependent step, per output count) is kept: a graph of a million nodes
// has a few dozen op types.
class MeaningCheck {
 public:
  MeaningCheck(std::int64_t from, std::int64_t to) : from_(from), to_(to) {}

  // The first node of `g` whose meaning changes, subgraphs included; "" when none does.
  std::string in_graph(const Graph& g) {
    for (NodeId id : g.nodes()) {
      const Node& n = g.node(id);
      const std::string_view name = n.op.name();
      if (name == ops::kInput || name == ops::kConst) continue;
      if (default_domain(n.op.domain()))
        if (const std::string& why = changed(n.op, n.outputs.size()); !why.empty()) return why + " (node '" + n.id + "')";
      for (const auto& [attr, value] : n.attrs) {
        const auto* body = std::get_if<Opaque>(&value);
        if (!body) continue;
        if (body->kind != onnx_io::kOpaqueGraph) return "node '" + n.id + "' holds graphs in attribute " + attr;
        onnx::GraphProto proto;
        if (!proto.ParseFromString(body->bytes)) return "node '" + n.id + "' has an unreadable subgraph";
        if (std::string why = in_body(proto); !why.empty()) return why + " (in a subgraph of node '" + n.id + "')";
      }
    }
    return {};
  }

 private:
  // The first node of `body` (or of a graph nested in it) whose meaning changes.
  std::string in_body(const onnx::GraphProto& body) {
    for (const auto& n : body.node()) {
      if (default_domain(n.domain()))
        if (const std::string& why = changed(n.op_type(), static_cast<std::size_t>(n.output_size())); !why.empty())
          return why;
      for (const auto& a : n.attribute()) {
        if (a.has_g())
          if (std::string why = in_body(a.g()); !why.empty()) return why;
        for (const auto& g : a.graphs())
          if (std::string why = in_body(g); !why.empty()) return why;
      }
    }
    return {};
  }

  // Why `op` of the default domain, on a node with `outputs` outputs, does not mean at
  // `to_` what it means at `from_`; "" when it does. Only one output or more matters
  // (unchanged_for_node).
  const std::string& changed(OpType op, std::size_t outputs) {
    const std::uint64_t key = std::uint64_t{op.index()} << 1 | (outputs == 1);
    auto [it, fresh] = by_type_.try_emplace(key);
    if (fresh) it->second = work_out(std::string(op.local_name()), outputs);
    return it->second;
  }
  const std::string& changed(const std::string& op, std::size_t outputs) {
    auto [it, fresh] = by_name_.try_emplace(outputs == 1 ? op : op + "#");
    if (fresh) it->second = work_out(op, outputs);
    return it->second;
  }

  std::string work_out(const std::string& op, std::size_t outputs) const {
    const onnx::OpSchema* at_from = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(from_), "");
    if (!at_from) return op + " has no schema at opset " + std::to_string(from_);
    for (std::int64_t v = from_ + 1; v <= to_; ++v) {
      const onnx::OpSchema* at_v = onnx::OpSchemaRegistry::Schema(op, static_cast<int>(v), "");
      if (!at_v || at_v->Deprecated()) return op + " is deprecated or removed at opset " + std::to_string(v);
      if (at_v->SinceVersion() == v && !adapter_table().compatible_step(op, v - 1) && !unchanged_for_node(op, v, outputs))
        return op + " changed at opset " + std::to_string(v);
    }
    return {};
  }

  std::int64_t from_, to_;
  std::unordered_map<std::uint64_t, std::string> by_type_;  // the graph's nodes, by interned op
  std::unordered_map<std::string, std::string> by_name_;    // subgraph bodies' nodes, by name
};

// The IR version ONNX released an opset with (onnx/helper.py's VERSION_TABLE): a model
// importing a newer opset than its IR version knows is refused by some readers.
std::int64_t ir_version_of_opset(std::int64_t opset) {
  if (opset <= 8) return 3;
  if (opset <= 10) return 5;
  if (opset <= 12) return 7;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

}  // namespace

OpsetRaise raise_onnx_opset(Graph& g, std::int64_t version) {
  OpsetRaise r;
  Attributes& p = g.properties();
  auto* domains = p.get_if<std::vector<std::string>>(onnx_io::kOpsetDomains);
  auto* versions = p.get_if<std::vector<std::int64_t>>(onnx_io::kOpsetVersions);
  if (!domains || !versions || domains->size() != versions->size()) return r;
  std::size_t at = domains->size();
  for (std::size_t i = 0; i < domains->size(); ++i)
    if (default_domain((*domains)[i])) at = i;
  if (at == domains->size()) return r;
  r.from = r.to = (*versions)[at];
  if (r.from >= version) return r;
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("");
  if (version > known.second) {
    r.kept_by = "libonnx knows ONNX opsets up to " + std::to_string(known.second);
    return r;
  }
  r.kept_by = MeaningCheck(r.from, version).in_graph(g);
  if (!r.kept_by.empty()) return r;
  std::vector<std::int64_t> raised = *versions;
  raised[at] = version;
  p.set(std::string(onnx_io::kOpsetVersions), std::move(raised));
  if (const auto* ir = p.get_if<std::int64_t>(onnx_io::kIrVersion); ir && *ir < ir_version_of_opset(version))
    p.set(std::string(onnx_io::kIrVersion), ir_version_of_opset(version));
  r.to = version;
  return r;
}

}  // namespace graphfuse
