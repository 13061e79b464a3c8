// ONNX export: a Graph becomes a ModelProto written atomically; see docs/onnx.md.
#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "graph/value_checks.h"
#include "graphfuse/io.h"
#include "io/mapped_input.h"
#include "io/onnx_contrib_types.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"
#include "io/text_values.h"

namespace graphfuse::onnx_io {

namespace {

template <class T>
const T* prop(const Graph& g, std::string_view key) {
  return g.properties().get_if<T>(key);
}

std::string node_what(const Node& n) { return "node '" + n.id + "' (" + std::string(n.op.name()) + ")"; }


// The value name of every output: its OutputInfo name, else the graph's derived name
// (made unique). Unused unnamed extra outputs get "" (ONNX's "not requested"), because
// naming them could ask an op for an optional output it should not compute.
class ValueNames {
 public:
  explicit ValueNames(const Graph& g) : names_(g.capacity()) {
    std::unordered_map<std::string, NodeId> owner;
    for (NodeId n : g.nodes()) {
      const Node& nd = g.node(n);
      names_[n].resize(nd.outputs.size());
      for (std::size_t k = 0; k < nd.outputs.size(); ++k) {
        const std::string& name = nd.outputs[k].name;
        if (name.empty()) continue;
        auto [it, fresh] = owner.emplace(name, n);
        if (!fresh)
          throw Error(nd.loc, node_what(nd) + ": output " + std::to_string(k) + " is named '" + name +
                                  "', but node '" + g.node(it->second).id + "' already has a value of that name");
        names_[n][k] = name;
      }
    }
    for (NodeId n : g.nodes()) {
      const Node& nd = g.node(n);
      const std::size_t required = contrib_required_outputs(nd.op.domain(), nd.op.local_name());
      for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) {
        if (!nd.outputs[k].name.empty()) continue;
        ValueRef v{n, k};
        if (k >= required && g.use_count(v) == 0 && !g.is_output(v)) continue;
        std::string base = g.value_name(v), name = base;
        for (std::size_t i = 1; !owner.emplace(name, n).second; ++i) name = base + "_" + std::to_string(i);
        names_[n][k] = name;
      }
    }
    for (auto& [name, n] : owner) all_.insert(name);
  }
  const std::string& operator()(ValueRef v) const { return names_[v.node][v.port]; }
  bool exists(const std::string& name) const { return all_.count(name) > 0; }

 private:
  std::vector<std::vector<std::string>> names_;
  std::unordered_set<std::string> all_;
};

class Exporter {
 public:
  /// Without data, initializers carry no raw_data; data() lists their bytes in order.
  Exporter(const Graph& g, bool with_data) : g_(g), names_(g), with_data_(with_data) {}

  onnx::ModelProto run() {
    write_model_fields();
    gp_ = m_.mutable_graph();
    write_inputs();
    write_initializers();
    write_nodes();
    write_outputs_and_value_info();
    write_opsets();
    return std::move(m_);
  }
  const std::vector<const Tensor*>& data() const { return data_; }

 private:
  void parse_rest(std::string_view key, google::protobuf::MessageLite& into) {
    if (const auto* o = prop<Opaque>(g_, key))
      if (!into.MergeFromString(o->bytes)) throw Error("graph property '" + std::string(key) + "' is not a valid " + into.GetTypeName());
  }

  void write_model_fields() {
    parse_rest(kModelRest, m_);
    parse_rest(kGraphRest, *m_.mutable_graph());
    const auto* ir = prop<std::int64_t>(g_, kIrVersion);
    m_.set_ir_version(ir ? *ir : static_cast<std::int64_t>(onnx::IR_VERSION));
    if (const auto* s = prop<std::string>(g_, kProducerName)) m_.set_producer_name(*s);
    if (!m_.has_producer_name()) m_.set_producer_name("graphfuse");
    if (const auto* s = prop<std::string>(g_, kProducerVersion)) m_.set_producer_version(*s);
    if (const auto* s = prop<std::string>(g_, kModelDomain)) m_.set_domain(*s);
    if (const auto* s = prop<std::string>(g_, kModelDoc)) m_.set_doc_string(*s);
    if (const auto* v = prop<std::int64_t>(g_, kModelVersion)) m_.set_model_version(*v);
    const auto* graph_name = prop<std::string>(g_, kGraphName);
    m_.mutable_graph()->set_name(graph_name ? *graph_name : "graphfuse");
    if (const auto* d = prop<std::string>(g_, kGraphDoc)) m_.mutable_graph()->set_doc_string(*d);
    const auto* keys = prop<std::vector<std::string>>(g_, kMetaKeys);
    const auto* values = prop<std::vector<std::string>>(g_, kMetaValues);
    if (keys && values)
      for (std::size_t i = 0; i < keys->size() && i < values->size(); ++i) {
        auto* kv = m_.add_metadata_props();
        kv->set_key((*keys)[i]);
        kv->set_value((*values)[i]);
      }
  }

  // Non-tensor types are kept opaque by value name; tensor types live on the OutputInfo.
  void write_type(const std::string& name, const ValueType& vt, onnx::ValueInfoProto& vi) {
    vi.set_name(name);
    if (const auto* o = prop<Opaque>(g_, std::string(kTypePrefix) + name)) {
      if (!vi.mutable_type()->ParseFromString(o->bytes)) throw Error("type of value '" + name + "' does not parse");
      return;
    }
    value_type_to_proto(vt, *vi.mutable_type());
  }

  void write_input(NodeId n) {
    const Node& nd = g_.node(n);
    ValueType vt = nd.outputs[0].type;
    const Tensor* t = nd.op == const_op_ ? nd.attrs.get_if<Tensor>("value") : nullptr;
    if (t && vt.dtype == DType::Undefined && !vt.shape_known) vt = ValueType{t->dtype, t->shape, true, {}};
    // ONNX requires a type on every graph input, and libonnx's shape inference crashes on
    // some models without one, so such a file would break every later command: refuse it
    // before anything is written.
    if (vt.dtype == DType::Undefined && !g_.properties().has(std::string(kTypePrefix) + names_({n, 0})))
      throw Error(nd.loc, "graph input '" + nd.id +
                              "' has no element type, which ONNX requires on every graph input (give it "
                              "one: `input x: float32[1, 3]` in .graph text, `types:` in YAML or JSON; "
                              "see docs/graph-formats.md)");
    write_type(names_({n, 0}), vt, *gp_->add_input());
    written_inputs_.insert(n);
  }

  // Graph inputs in their original order, with initializers that were declared inputs
  // back in their places; inputs added since come after them.
  void write_inputs() {
    if (const auto* order = prop<std::vector<std::string>>(g_, kInputOrder)) {
      std::unordered_map<std::string, NodeId> by_name;
      for (NodeId n : g_.nodes())
        if (g_.node(n).op == const_op_ || g_.node(n).op == input_op_) by_name.emplace(names_({n, 0}), n);
      for (const auto& name : *order)
        if (auto it = by_name.find(name); it != by_name.end() && !written_inputs_.count(it->second))
          write_input(it->second);
    }
    for (NodeId n : g_.inputs()) {
      if (!g_.alive(n) || written_inputs_.count(n)) continue;
      // Any other node would be declared twice: as a graph input and as its own output.
      if (std::string err = checks::graph_input_problem(g_, n); !err.empty()) throw Error(g_.node(n).loc, err);
      write_input(n);
    }
    for (NodeId n : g_.nodes())  // an Input node missing from inputs() is still an input
      if (g_.node(n).op == input_op_ && !written_inputs_.count(n)) write_input(n);
  }

  void write_initializers() {
    for (NodeId n : g_.nodes()) {
      const Node& nd = g_.node(n);
      if (nd.op != const_op_) continue;
      const Tensor* t = nd.attrs.get_if<Tensor>("value");
      if (!t) throw Error(nd.loc, node_what(nd) + ": a constant needs a 'value' tensor to become an ONNX initializer");
      auto* tp = gp_->add_initializer();
      // A tensor ONNX cannot hold is the input's fault: say where the node came from.
      textio::at_node(g_, nd, [&] { tensor_to_proto(*t, *tp, node_what(nd), with_data_); });
      tp->set_name(names_({n, 0}));
      data_.push_back(t);
    }
  }

  void write_nodes() {
    std::unordered_map<std::string_view, const std::string*> docs;
    const auto* doc_ids = prop<std::vector<std::string>>(g_, kNodeDocIds);
    const auto* doc_texts = prop<std::vector<std::string>>(g_, kNodeDocs);
    if (doc_ids && doc_texts)
      for (std::size_t i = 0; i < doc_ids->size() && i < doc_texts->size(); ++i) docs.emplace((*doc_ids)[i], &(*doc_texts)[i]);
    for (NodeId n : textio::write_order(g_)) {
      const Node& nd = g_.node(n);
      if (nd.op == const_op_ || nd.op == input_op_) continue;
      auto* np = gp_->add_node();
      np->set_name(nd.id);
      np->set_op_type(std::string(nd.op.local_name()));
      const std::string domain(canonical_domain(nd.op.domain()));
      if (!domain.empty()) np->set_domain(domain);
      domains_used_.insert(domain);
      for (ValueRef v : nd.inputs) np->add_input(v.valid() ? names_(v) : std::string{});
      std::size_t count = nd.outputs.size();
      while (count > 1 && names_({n, static_cast<std::uint32_t>(count - 1)}).empty()) --count;
      for (std::uint32_t k = 0; k < count; ++k) np->add_output(names_({n, k}));
      for (const auto& entry : nd.attrs) {
        // Named references, not a structured binding: clang 14 (the fuzz build) cannot
        // capture a binding in the lambda below.
        const std::string& name = entry.first;
        const AttrValue& value = entry.second;
        // graphfuse's own attributes (`_rule` provenance) are not ONNX attributes: ONNX
        // Runtime rejects unknown attributes, so they travel as model metadata instead.
        if (name.starts_with('_')) {
          const auto* text = std::get_if<std::string>(&value);
          auto* kv = m_.add_metadata_props();
          kv->set_key(std::string(kGraphfuseAttrPrefix) + nd.id + ":" + name);
          kv->set_value(text ? *text : format_attr_value(value));
          continue;
        }
        auto* a = np->add_attribute();
        textio::at_node(g_, nd, [&] { attribute_to_proto(name, value, *a, node_what(nd)); });
        check_outer_names(nd, *a);
      }
      if (auto it = docs.find(nd.id); it != docs.end()) np->set_doc_string(*it->second);
    }
  }

  // Subgraphs (If/Loop/Scan bodies) read outer values by name, without an edge in the
  // Graph; a rewrite that removed or renamed such a value would break the model silently.
  void check_outer_names(const Node& nd, const onnx::AttributeProto& a) {
    if (!a.has_g() && a.graphs_size() == 0) return;
    std::unordered_set<std::string> outer;
    if (a.has_g()) subgraph_outer_names(a.g(), outer);
    for (const auto& sub : a.graphs()) subgraph_outer_names(sub, outer);
    std::vector<std::string> lost;
    for (const auto& name : outer)
      if (!names_.exists(name)) lost.push_back(name);
    if (lost.empty()) return;
    std::sort(lost.begin(), lost.end());
    throw Error(nd.loc, node_what(nd) + ": subgraph attribute '" + a.name() + "' reads value '" + lost[0] +
                            "', which is no longer in the graph");
  }

  void write_outputs_and_value_info() {
    std::unordered_set<std::string> outputs;
    for (ValueRef v : g_.outputs()) {
      write_type(names_(v), g_.node(v.node).outputs[v.port].type, *gp_->add_output());
      outputs.insert(names_(v));
    }
    // Types of intermediate values (shape inference results the file carried) go back as
    // value_info; types graphfuse inferred at import do not (the file did not have them).
    std::unordered_set<std::string> inferred;
    if (const auto* names = prop<std::vector<std::string>>(g_, kInferredValues))
      inferred.insert(names->begin(), names->end());
    for (NodeId n : g_.nodes()) {
      const Node& nd = g_.node(n);
      if (nd.op == const_op_ || nd.op == input_op_) continue;
      for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) {
        const std::string& name = names_({n, k});
        const ValueType& vt = nd.outputs[k].type;
        bool known = vt.dtype != DType::Undefined || vt.shape_known ||
                     g_.properties().has(std::string(kTypePrefix) + name);
        if (!name.empty() && known && !outputs.count(name) && !inferred.count(name)) write_type(name, vt, *gp_->add_value_info());
      }
    }
  }

  // The original imports stay; a domain a rewrite introduced gets an import (the newest
  // version this libonnx knows for ONNX's own domains, 1 for com.microsoft and others).
  void write_opsets() {
    const auto* domains = prop<std::vector<std::string>>(g_, kOpsetDomains);
    const auto* versions = prop<std::vector<std::int64_t>>(g_, kOpsetVersions);
    std::unordered_set<std::string> imported;
    if (domains && versions)
      for (std::size_t i = 0; i < domains->size() && i < versions->size(); ++i) {
        auto* o = m_.add_opset_import();
        if (!(*domains)[i].empty()) o->set_domain((*domains)[i]);  // exporters leave "" unset
        o->set_version((*versions)[i]);
        imported.insert(std::string(canonical_domain((*domains)[i])));
      }
    std::vector<std::string> missing;
    // ONNX needs an import of the default domain even for a graph without ops of it.
    if (!domains || domains->empty()) domains_used_.insert("");
    for (const auto& d : domains_used_)
      if (!imported.count(d)) missing.push_back(d);
    std::sort(missing.begin(), missing.end());  // deterministic file bytes
    const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& d : missing) {
      auto it = known.find(d);
      auto* o = m_.add_opset_import();
      // "" stays unset, as it is for imported opsets above: otherwise the second save of
      // a model first written from a non-ONNX graph would differ from the first.
      if (!d.empty()) o->set_domain(d);
      o->set_version(it != known.end() && d != "com.microsoft" ? it->second.second : 1);
    }
  }

  const Graph& g_;
  ValueNames names_;
  onnx::ModelProto m_;
  onnx::GraphProto* gp_ = nullptr;
  OpType const_op_ = OpType::intern(ops::kConst);
  OpType input_op_ = OpType::intern(ops::kInput);
  std::unordered_set<NodeId> written_inputs_;
  std::unordered_set<std::string> domains_used_;
  bool with_data_;
  std::vector<const Tensor*> data_;
};

void put_varint(std::string& out, std::uint64_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>(v | 0x80));
  out.push_back(static_cast<char>(v));
}
std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}
// A length-delimited field's tag byte (field numbers below 16 fit one byte).
constexpr char len_tag(int field) { return static_cast<char>((field << 3) | 2); }

}  // namespace

onnx::ModelProto model_from_graph(const Graph& g) {
  g.validate();
  return Exporter(g, true).run();
}

// Protobuf writes fields in field-number order; this writes the same order by hand so
// that tensor bytes go from the graph straight into the output: ModelProto fields 1-6,
// graph (7) = [node (1), name (2)] + initializers (5) + [the rest], then fields 8+.
ModelPieces serialize_model_pieces(const Graph& g, const PlaceInitializer& place) {
  g.validate();
  Exporter ex(g, false);
  onnx::ModelProto rest = ex.run();
  onnx::ModelProto head;
  if (rest.has_ir_version()) head.set_ir_version(rest.ir_version());
  if (rest.has_producer_name()) head.set_producer_name(rest.producer_name());
  if (rest.has_producer_version()) head.set_producer_version(rest.producer_version());
  if (rest.has_domain()) head.set_domain(rest.domain());
  if (rest.has_model_version()) head.set_model_version(rest.model_version());
  if (rest.has_doc_string()) head.set_doc_string(rest.doc_string());
  for (auto clear : {&onnx::ModelProto::clear_ir_version, &onnx::ModelProto::clear_producer_name,
                     &onnx::ModelProto::clear_producer_version, &onnx::ModelProto::clear_domain,
                     &onnx::ModelProto::clear_model_version, &onnx::ModelProto::clear_doc_string})
    (rest.*clear)();
  onnx::GraphProto graph_tail;
  graph_tail.Swap(rest.mutable_graph());
  rest.clear_graph();
  onnx::GraphProto graph_head;
  graph_head.mutable_node()->Swap(graph_tail.mutable_node());
  if (graph_tail.has_name()) graph_head.set_name(graph_tail.name());
  graph_tail.clear_name();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> inits;
  inits.Swap(graph_tail.mutable_initializer());

  ModelPieces out;
  auto own = [&](std::string s) -> std::string_view { return out.owned.emplace_back(std::move(s)); };
  const std::string_view model_head = own(head.SerializeAsString()), model_tail = own(rest.SerializeAsString());
  const std::string_view gh = own(graph_head.SerializeAsString()), gt = own(graph_tail.SerializeAsString());
  // Per initializer: its head (everything but raw_data) and the raw bytes, or none when
  // `place` put them elsewhere (external data fields are then in the head).
  std::vector<std::string_view> tensor_heads, tensor_raw;
  std::uint64_t graph_len = gh.size() + gt.size();
  for (int i = 0; i < inits.size(); ++i) {
    const Tensor& t = *ex.data()[static_cast<std::size_t>(i)];
    onnx::TensorProto& tp = *inits.Mutable(i);
    const bool elsewhere = place && place(t, tp);
    // Non-null even when empty: a null view marks bytes placed elsewhere below.
    std::string_view raw = elsewhere ? std::string_view{} : t.data->empty() ? std::string_view("") : *t.data;
    tensor_heads.push_back(own(tp.SerializeAsString()));
    tensor_raw.push_back(raw);
    std::uint64_t len = tensor_heads.back().size() + (elsewhere ? 0 : 1 + varint_size(raw.size()) + raw.size());
    graph_len += 1 + varint_size(len) + len;
  }
  std::string& frame = out.owned.emplace_back();  // tags and lengths, one string, views set below
  frame.reserve(16 + 2 * 11 * static_cast<std::size_t>(inits.size()));
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // into `frame`, filled before views are taken
  auto put_frame = [&](auto&& write) {
    std::size_t at = frame.size();
    write();
    spans.emplace_back(at, frame.size() - at);
  };
  put_frame([&] {
    frame += len_tag(7);
    put_varint(frame, graph_len);
  });
  for (int i = 0; i < inits.size(); ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool elsewhere = tensor_raw[k].data() == nullptr;
    std::uint64_t raw = tensor_raw[k].size();
    put_frame([&] {
      frame += len_tag(5);
      put_varint(frame, tensor_heads[k].size() + (elsewhere ? 0 : 1 + varint_size(raw) + raw));
    });
    put_frame([&] {
      if (elsewhere) return;
      frame += len_tag(9);
      put_varint(frame, raw);
    });
  }
  auto frame_view = [&](std::size_t j) { return std::string_view(frame).substr(spans[j].first, spans[j].second); };
  out.pieces.push_back(model_head);
  out.pieces.push_back(frame_view(0));
  out.pieces.push_back(gh);
  for (std::size_t k = 0; k < tensor_heads.size(); ++k) {
    out.pieces.push_back(frame_view(1 + 2 * k));
    out.pieces.push_back(tensor_heads[k]);
    out.pieces.push_back(frame_view(2 + 2 * k));
    if (!tensor_raw[k].empty()) {
      out.sources.resize(out.pieces.size());
      out.pieces.push_back(tensor_raw[k]);
      out.sources.push_back(io::file_source(ex.data()[k]->data));
    }
  }
  out.pieces.push_back(gt);
  out.pieces.push_back(model_tail);
  out.sources.resize(out.pieces.size());
  for (auto p : out.pieces) out.size += p.size();
  return out;
}

std::string serialize_model(const Graph& g) {
  ModelPieces m = serialize_model_pieces(g, {});
  if (m.size > static_cast<std::uint64_t>(INT_MAX))
    throw Error("the model is " + std::to_string(m.size >> 20) +
                " MiB, over protobuf's 2 GB limit for one buffer (save it to a file, which puts the weights "
                "in external data)");
  std::string out;
  out.reserve(m.size);
  for (auto p : m.pieces) out += p;
  return out;
}

}  // namespace graphfuse::onnx_io
