// The schema readings' nodes into a graph: straight in file order, or through GraphBuilder.
#include "graph_node_sinks.h"

#include <span>

#include "graphfuse/io.h"

namespace graphfuse::textio {

namespace {

const std::string kNoName;  // `what` of a quiet reading: no message is built

/// A graph-level list of names (`inputs`, `outputs`), each handed to `take`.
template <class Take>
bool names(const DocRef& list, const Check& c, const char* what, const Take& take) {
  if (!list.is_seq()) return c.fail(list, [&] { return std::string("`") + what + "` must be a list"; });
  for (const auto& r : list) {
    if (!r.is_scalar() || r.scalar().empty())
      return c.fail(r, [&] { return std::string(what) == "inputs" ? std::string("a graph input must be a non-empty name")
                                                                  : std::string("a graph output must be a non-empty name"); });
    if (!take(r)) return false;
  }
  return true;
}

}  // namespace

bool set_properties(Graph& g, const TopParts& top, const Check& c) {
  if (!top.has_properties) return true;
  std::vector<YamlEntry> es;
  if (!yaml_entries(top.properties, c, c.loud() ? std::string("properties") : kNoName, es)) return false;
  for (YamlEntry& e : es) {
    AttrValue v;
    if (!yaml_attr_value(e.value, c, c.loud() ? "property '" + e.key + "'" : kNoName, v)) return false;
    g.properties().set(std::move(e.key), std::move(v));
  }
  return true;
}

bool InOrderSink::add(NodeBatch& b) {
  // A piece's reading reads each distinct attribute set once and its nodes share that copy;
  // the graph swaps it for its own canonical copy, so the first time is looked up and the
  // rest take the canonical copy from here (else each would be hashed and looked up
  // again under the interner's lock). Kept for one batch: until the batch is added its
  // nodes hold their sets, so an address here cannot be another set's.
  canonical_.clear();
  for (NodeBatch::Node& n : b.nodes) {
    inputs_.clear();
    for (std::uint32_t i = n.inputs_begin; i < n.inputs_end; ++i) {
      std::string_view text = b.inputs[i];
      ValueRef v;
      if (!text.empty() && !builder_.resolve(text, b.input_hashes[i], v)) return false;
      inputs_.push_back(v);
    }
    std::span<const ValueType> types;
    if (n.types) types = *n.types;
    const void* set = n.attrs.canonical() ? nullptr : n.attrs.identity();
    if (set) {
      for (const auto& [from, to] : canonical_)
        if (from == set) {
          n.attrs = to;
          set = nullptr;
          break;
        }
    }
    const Attributes* added =
        builder_.add_node(n.id_hash, std::move(n.id), n.op, InputList(inputs_.begin(), inputs_.end()), std::move(n.attrs),
                          positions_.at(n.pos),
                          std::span<std::string>(b.output_names.data() + n.outputs_begin, n.outputs_end - n.outputs_begin),
                          types);
    if (!added) return false;
    if (set && added->canonical() && canonical_.size() < kMaxCanonical) canonical_.emplace_back(set, *added);
  }
  return true;
}

std::optional<Graph> InOrderSink::finish(const TopParts& top, const Check& quiet) {
  if (top.has_inputs) {
    if (!names(top.inputs, quiet, "inputs",
               [&](const DocRef& r) { return builder_.add_graph_input(r.scalar(), quiet.src().loc(r)); }))
      return std::nullopt;
  } else if (!builder_.inputs_from_input_nodes()) {
    return std::nullopt;
  }
  if (top.has_outputs && !names(top.outputs, quiet, "outputs", [&](const DocRef& r) {
        ValueRef v;
        if (!builder_.resolve(r.scalar(), v)) return false;
        builder_.add_graph_output(v);
        return true;
      }))
    return std::nullopt;
  std::optional<Graph> g = builder_.finish();
  if (!g || !set_properties(*g, top, quiet)) return std::nullopt;
  return g;
}

void BuilderSink::add(NodeBatch& b) {
  static const std::string kInput(ops::kInput);
  for (NodeBatch::Node& n : b.nodes) {
    PendingNode p;
    p.id = std::move(n.id);
    p.op = std::string(n.op.name());
    p.loc = positions_.at(n.pos);
    p.attrs = std::move(n.attrs);
    for (std::uint32_t i = n.inputs_begin; i < n.inputs_end; ++i) {
      std::string_view text = b.inputs[i];
      p.inputs.push_back(PendingRef{std::string(text), -1, text.empty(), positions_.at(b.input_pos[i])});
    }
    for (std::uint32_t k = n.outputs_begin; k < n.outputs_end; ++k) p.output_names.push_back(std::move(b.output_names[k]));
    if (n.types) p.output_types = *n.types;
    if (p.op == kInput) input_ops_.push_back(p.id);
    builder_.add_node(std::move(p));
  }
}

Graph BuilderSink::finish(const TopParts& top, const YamlSource& src) {
  const Check loud = Check::loud(src);
  if (top.has_inputs) {
    names(top.inputs, loud, "inputs", [&](const DocRef& r) {
      PendingRef ref{std::string(r.scalar()), -1, false, src.loc(r)};
      // A graph input need not be listed among the nodes: it is then an Input node.
      if (!builder_.has_node(ref.name)) {
        PendingNode in;
        in.id = ref.name;
        in.op = std::string(ops::kInput);
        in.loc = ref.loc;
        builder_.add_node(std::move(in));
      }
      builder_.add_graph_input(std::move(ref));
      return true;
    });
  } else {
    for (const auto& id : input_ops_) builder_.add_graph_input(PendingRef{id, -1, false, {}});
  }
  if (top.has_outputs)
    names(top.outputs, loud, "outputs", [&](const DocRef& r) {
      builder_.add_graph_output(PendingRef{std::string(r.scalar()), -1, false, src.loc(r)});
      return true;
    });
  Graph g = builder_.build(src.file);
  set_properties(g, top, loud);
  return g;
}

}  // namespace graphfuse::textio
