// ONNX import: a .onnx file (ModelProto) becomes a Graph; see docs/onnx.md for the mapping.
#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "graph/value_checks.h"
#include "graphfuse/io.h"
#include "io/onnx_convert.h"
#include "io/onnx_external.h"
#include "io/onnx_node_types.h"
#include "io/onnx_shapes.h"
#include "io/onnx_sym_infer.h"
#include "io/onnx_wire.h"

namespace graphfuse::onnx_io {

onnx::ModelProto read_model_proto(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(SourceLoc{path}, std::string("cannot open ONNX model: ") + std::strerror(errno));
  google::protobuf::io::FileInputStream raw(fd, 1 << 20);
  raw.SetCloseOnDelete(true);
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream coded(&raw);
  // Protobuf's own ceiling is 2 GB; models with bigger weights must use external data.
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    if (raw.GetErrno() != 0)
      throw Error(SourceLoc{path}, std::string("cannot read ONNX model: ") + std::strerror(raw.GetErrno()));
    throw Error(SourceLoc{path}, "not a valid ONNX model: protobuf parsing failed (truncated, over 2 GB, or not ONNX)");
  }
  return model;
}

namespace {

void parse_or_fail(std::string_view wire, onnx::ModelProto& model, const std::string& path) {
  if (wire.size() > static_cast<std::size_t>(INT_MAX))
    throw Error(SourceLoc{path}, "not a valid ONNX model: protobuf parsing failed (truncated, over 2 GB, or not ONNX)");
  google::protobuf::io::CodedInputStream coded(reinterpret_cast<const std::uint8_t*>(wire.data()),
                                               static_cast<int>(wire.size()));
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(SourceLoc{path}, "not a valid ONNX model: protobuf parsing failed (truncated, over 2 GB, or not ONNX)");
}

}  // namespace

onnx::ModelProto parse_mapped_model(const io::MappedInput& file, const std::string& path, TensorSources& sources) {
  onnx::ModelProto model;
  // Initializer payloads of this size or more stay in the file; smaller ones (shape
  // tensors, scalars) are parsed, because libonnx's inference reads their values.
  constexpr std::uint64_t kLeaveInFile = 4096;
  std::optional<StrippedModel> stripped = strip_initializer_data(file.bytes(), kLeaveInFile);
  if (!stripped) {
    parse_or_fail(file.bytes(), model, path);
    return model;
  }
  parse_or_fail(stripped->bytes, model, path);
  const auto& inits = model.graph().initializer();
  for (const LeftInFile& l : stripped->left) {
    // The wire reader counted what protobuf parsed; a mismatch would be a bug here, and
    // reading the file whole is then still right.
    if (l.initializer >= static_cast<std::size_t>(inits.size()) || inits[static_cast<int>(l.initializer)].has_raw_data()) {
      sources.raw.clear();
      model.Clear();
      parse_or_fail(file.bytes(), model, path);
      return model;
    }
    sources.raw[&inits[static_cast<int>(l.initializer)]] = {l.offset, l.length};
  }
  return model;
}

namespace {

// Builds the Graph from a ModelProto it consumes. Ids are claimed in a fixed order
// (named nodes, unnamed nodes, graph inputs, initializers) so they are deterministic.
class Importer {
 public:
  Importer(const std::string& file, const std::string& dir, std::vector<InferredType> inferred,
           std::string inference_error, TensorSources& sources)
      : file_(file), dir_(dir), sources_(sources), inferred_(std::move(inferred)),
        inference_error_(std::move(inference_error)) {}

  Graph run(onnx::ModelProto& model) {
    if (!model.has_graph()) fail("the model has no graph");
    read_model_fields(model);
    onnx::GraphProto& gp = *model.mutable_graph();
    if (gp.sparse_initializer_size() > 0)
      fail("sparse initializer '" + gp.sparse_initializer(0).values().name() + "' is not supported");
    claim_node_ids(gp);
    add_graph_inputs(gp);
    add_initializers(gp);
    add_nodes(gp);
    read_value_info(gp);
    add_graph_outputs(gp);
    add_inferred_types();
    keep_rest(model);
    g_.source_file = file_;
    g_.validate();
    // What libonnx's inference lost on dynamic axes (docs/shapes.md); on a valid graph only.
    sym::infer_graph(g_);
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error(SourceLoc{file_}, msg); }

  // `base` if free, else base_1, base_2, ... (the first free one). Node ids and value names
  // are one namespace in graphfuse (an output name must not be another node's id, nor a
  // node's own output other than its first, or text formats could not say which is meant),
  // while ONNX keeps them apart: such a name is not free. `node` is the claiming node's
  // index, -1 for graph inputs and initializers.
  bool free_for(const std::string& cand, int node) const {
    if (taken_.count(cand)) return false;
    auto it = producer_.find(cand);
    return it == producer_.end() || (it->second.first == node && it->second.second == 0);
  }
  std::string claim(const std::string& base, int node = -1) {
    if (free_for(base, node)) return *taken_.insert(base).first;
    for (std::size_t k = 1;; ++k) {
      std::string cand = base + "_" + std::to_string(k);
      if (free_for(cand, node)) return *taken_.insert(cand).first;
    }
  }

  void read_model_fields(const onnx::ModelProto& m) {
    Attributes& p = g_.properties();
    if (m.has_ir_version()) p.set(std::string(kIrVersion), static_cast<std::int64_t>(m.ir_version()));
    std::vector<std::string> domains;
    std::vector<std::int64_t> versions;
    for (const auto& o : m.opset_import()) {
      domains.push_back(o.domain());
      versions.push_back(o.version());
    }
    p.set(std::string(kOpsetDomains), std::move(domains));
    p.set(std::string(kOpsetVersions), std::move(versions));
    auto text = [&](std::string_view key, bool has, const std::string& v) {
      if (has) p.set(std::string(key), v);
    };
    text(kProducerName, m.has_producer_name(), m.producer_name());
    text(kProducerVersion, m.has_producer_version(), m.producer_version());
    text(kModelDomain, m.has_domain(), m.domain());
    if (m.has_model_version()) p.set(std::string(kModelVersion), static_cast<std::int64_t>(m.model_version()));
    text(kModelDoc, m.has_doc_string(), m.doc_string());
    text(kGraphName, m.graph().has_name(), m.graph().name());
    text(kGraphDoc, m.graph().has_doc_string(), m.graph().doc_string());
    if (m.metadata_props_size() > 0) {
      std::vector<std::string> keys, values;
      for (const auto& kv : m.metadata_props()) {
        if (kv.key().starts_with(kGraphfuseAttrPrefix)) {
          graphfuse_attrs_.emplace_back(kv.key().substr(kGraphfuseAttrPrefix.size()), kv.value());
          continue;
        }
        keys.push_back(kv.key());
        values.push_back(kv.value());
      }
      p.set(std::string(kMetaKeys), std::move(keys));
      p.set(std::string(kMetaValues), std::move(values));
    }
  }

  // Named nodes keep their names; the rest (unnamed or a repeated name) are named after
  // their first output, so ids are stable across runs and round trips.
  void claim_node_ids(const onnx::GraphProto& gp) {
    ids_.resize(static_cast<std::size_t>(gp.node_size()));
    // Graph inputs and initializers are values too; their Input/Const nodes (index -1) take
    // those names as ids later, so no operator node may take them first.
    for (const auto& vi : gp.input()) producer_.emplace(vi.name(), std::pair{-1, 0});
    for (const auto& t : gp.initializer()) producer_.emplace(t.name(), std::pair{-1, 0});
    for (int i = 0; i < gp.node_size(); ++i)
      for (int k = 0; k < gp.node(i).output_size(); ++k)
        if (!gp.node(i).output(k).empty()) producer_.emplace(gp.node(i).output(k), std::pair{i, k});
    for (int i = 0; i < gp.node_size(); ++i) {
      const std::string& name = gp.node(i).name();
      if (!name.empty() && free_for(name, i)) ids_[static_cast<std::size_t>(i)] = *taken_.insert(name).first;
    }
    for (int i = 0; i < gp.node_size(); ++i) {
      if (!ids_[static_cast<std::size_t>(i)].empty()) continue;
      const auto& n = gp.node(i);
      std::string base = n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : n.op_type();
      ids_[static_cast<std::size_t>(i)] = claim(base.empty() ? "node" : base, i);
    }
  }

  // A value type: tensors go on the OutputInfo, anything else is kept opaque by name.
  void take_type(const onnx::ValueInfoProto& vi, ValueType& out) {
    if (!vi.has_type()) return;
    if (!value_type_from_proto(vi.type(), out))
      g_.properties().set(std::string(kTypePrefix) + vi.name(),
                          Opaque{std::string(kOpaqueType), vi.type().SerializeAsString()});
  }

  void define(const std::string& name, ValueRef v, const std::string& who) {
    if (!values_.emplace(name, v).second) fail(who + ": value '" + name + "' is defined more than once");
  }

  void add_graph_inputs(const onnx::GraphProto& gp) {
    std::unordered_set<std::string> inits;
    for (const auto& t : gp.initializer()) inits.insert(t.name());
    std::vector<std::string> order;
    bool interleaved = false;
    for (const auto& vi : gp.input()) {
      if (vi.name().empty()) fail("a graph input has no name");
      order.push_back(vi.name());
      if (inits.count(vi.name())) {
        // An initializer declared as an input (a default value): the initializer wins
        // and becomes the Const; the declaration is remembered for export.
        interleaved = true;
        take_type(vi, declared_[vi.name()]);
        continue;
      }
      ValueType type;
      take_type(vi, type);
      NodeId n = g_.add_input(claim(vi.name()), std::move(type));
      g_.output_infos(n)[0].name = vi.name();
      define(vi.name(), {n, 0}, "graph input '" + vi.name() + "'");
    }
    if (interleaved) g_.properties().set(std::string(kInputOrder), std::move(order));
  }

  void add_initializers(onnx::GraphProto& gp) {
    static const OpType kConst = OpType::intern(ops::kConst);
    for (auto& t : *gp.mutable_initializer()) {
      if (t.name().empty()) fail("an initializer has no name");
      const std::string what = "initializer '" + t.name() + "'";
      if (values_.count(t.name())) fail(what + " is defined more than once");
      Attributes attrs;
      Tensor value = tensor_from_proto(t, dir_, what, &sources_);
      ValueType type;
      if (auto it = declared_.find(t.name()); it != declared_.end()) {
        type = it->second;
      } else {
        type.dtype = value.dtype;
        type.shape = value.shape;
        type.shape_known = true;
      }
      attrs.set("value", std::move(value));
      NodeId n = g_.add_node(claim(t.name()), kConst, {}, std::move(attrs));
      g_.output_infos(n)[0] = OutputInfo{t.name(), std::move(type)};
      define(t.name(), {n, 0}, what);
      t.Clear();  // its bytes now live in the graph; free the proto's bookkeeping early
    }
  }

  std::string node_what(std::size_t i, const onnx::NodeProto& n) const {
    std::string op = n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
    return "node '" + ids_[i] + "' (" + op + ")";
  }

  void add_nodes(onnx::GraphProto& gp) {
    std::vector<std::string> doc_ids, docs;
    std::vector<NodeId> made;
    for (int i = 0; i < gp.node_size(); ++i) {
      auto idx = static_cast<std::size_t>(i);
      onnx::NodeProto& n = *gp.mutable_node(i);
      const std::string what = node_what(idx, n);
      if (n.op_type().empty()) fail(what + ": node has no op_type");
      // The graph spells domains as a dotted prefix and splits at the last dot.
      if (n.op_type().find('.') != std::string::npos) fail(what + ": op_type contains a '.'");
      std::string_view domain = canonical_domain(n.domain());
      if (domain.empty() && (n.op_type() == ops::kConst || n.op_type() == ops::kInput))
        fail(what + ": op '" + n.op_type() + "' is reserved by graphfuse for initializers and graph inputs");
      OpType op = OpType::intern(domain.empty() ? n.op_type() : std::string(domain) + "." + n.op_type());
      Attributes attrs;
      for (auto& a : *n.mutable_attribute()) {
        if (a.name().empty()) fail(what + ": an attribute has no name");
        if (attrs.has(a.name())) fail(what + ": attribute '" + a.name() + "' appears twice");
        std::string name = a.name();
        attrs.set(name, attribute_from_proto(a, dir_, what + ", attribute '" + name + "'"));
      }
      // Trailing empty outputs mean "not requested", the same as leaving them out.
      int num_out = n.output_size();
      while (num_out > 0 && n.output(num_out - 1).empty()) --num_out;
      NodeId id = g_.add_node(ids_[idx], op, {}, std::move(attrs),
                              static_cast<std::uint32_t>(std::max(num_out, 1)));
      auto& infos = g_.output_infos(id);
      for (int k = 0; k < num_out; ++k) {
        infos[static_cast<std::size_t>(k)].name = n.output(k);
        if (!n.output(k).empty()) define(n.output(k), {id, static_cast<std::uint32_t>(k)}, what);
      }
      if (!n.doc_string().empty()) {
        doc_ids.push_back(ids_[idx]);
        docs.push_back(n.doc_string());
      }
      made.push_back(id);
    }
    // Inputs are wired after every node exists: files are not always topologically sorted.
    for (int i = 0; i < gp.node_size(); ++i) {
      const onnx::NodeProto& n = gp.node(i);
      InputList ins;
      ins.reserve(static_cast<std::size_t>(n.input_size()));
      for (const auto& name : n.input()) {
        if (name.empty()) {
          ins.push_back(ValueRef{});  // an absent optional input
          continue;
        }
        auto it = values_.find(name);
        if (it == values_.end())
          fail(node_what(static_cast<std::size_t>(i), n) + ": input '" + name +
               "' is not a graph input, an initializer or any node's output");
        ins.push_back(it->second);
      }
      g_.set_inputs(made[static_cast<std::size_t>(i)], std::move(ins));
    }
    // graphfuse's own attributes come back from the model metadata ("node:attr" keys);
    // the attribute name never has a ':' so the node id is everything before the last one.
    for (const auto& [key, value] : graphfuse_attrs_) {
      auto colon = key.rfind(':');
      auto node = colon == std::string::npos ? std::nullopt : g_.find(key.substr(0, colon));
      if (node) g_.attrs(*node).set(key.substr(colon + 1), value);
    }
    if (!doc_ids.empty()) {
      g_.properties().set(std::string(kNodeDocIds), std::move(doc_ids));
      g_.properties().set(std::string(kNodeDocs), std::move(docs));
    }
  }

  // value_info describes intermediate values; its types go onto the producing output.
  // Entries naming no value describe nothing and are not kept.
  void read_value_info(const onnx::GraphProto& gp) {
    for (const auto& vi : gp.value_info()) {
      auto it = values_.find(vi.name());
      if (it == values_.end()) continue;
      take_type(vi, g_.output_infos(it->second.node)[it->second.port].type);
    }
  }

  void add_graph_outputs(const onnx::GraphProto& gp) {
    for (const auto& vi : gp.output()) {
      auto it = values_.find(vi.name());
      if (it == values_.end())
        fail("graph output '" + vi.name() + "' is not a graph input, an initializer or any node's output");
      take_type(vi, g_.output_infos(it->second.node)[it->second.port].type);
      g_.add_output(it->second);
    }
  }

  // Types from shape inference go on outputs the file left untyped, so rules can check
  // ranks and shapes of intermediate values; their names are listed so that export does
  // not write them as value_info the file never had.
  void add_inferred_types() {
    std::vector<std::string> names;
    for (const auto& [name, type] : inferred_) {
      auto it = values_.find(name);
      if (it == values_.end()) continue;
      ValueType& vt = g_.output_infos(it->second.node)[it->second.port].type;
      if (vt.dtype != DType::Undefined || vt.shape_known || g_.properties().has(std::string(kTypePrefix) + name))
        continue;
      if (!value_type_from_proto(type, vt)) continue;  // sequences, maps: nothing a rule reads
      names.push_back(name);
    }
    inferred_.clear();
    if (!names.empty()) g_.properties().set(std::string(kInferredValues), std::move(names));
    // Kept in the properties (YAML/JSON output shows them) for whoever asks why a rule that
    // needs shapes did not fire.
    if (!inference_error_.empty()) g_.properties().set(std::string(kInferenceError), inference_error_);
  }

  // Whatever graphfuse does not interpret (local functions, training info, quantization
  // annotations, fields newer than this libonnx) is kept serialized and merged back on export.
  void keep_rest(onnx::ModelProto& m) {
    onnx::GraphProto& gp = *m.mutable_graph();
    gp.clear_node();
    gp.clear_initializer();
    gp.clear_input();
    gp.clear_output();
    gp.clear_value_info();
    gp.clear_name();
    gp.clear_doc_string();
    if (gp.ByteSizeLong() > 0)
      g_.properties().set(std::string(kGraphRest), Opaque{std::string(kOpaqueGraph), gp.SerializeAsString()});
    m.clear_graph();
    m.clear_ir_version();
    m.clear_opset_import();
    m.clear_producer_name();
    m.clear_producer_version();
    m.clear_domain();
    m.clear_model_version();
    m.clear_doc_string();
    m.clear_metadata_props();
    if (m.ByteSizeLong() > 0)
      g_.properties().set(std::string(kModelRest), Opaque{"onnx.ModelProto", m.SerializeAsString()});
  }

  const std::string& file_;
  const std::string& dir_;
  TensorSources& sources_;
  Graph g_;
  std::vector<std::string> ids_;
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, std::pair<int, int>> producer_;  // value name -> (node index, output)
  std::unordered_map<std::string, ValueRef> values_;
  std::unordered_map<std::string, ValueType> declared_;
  std::vector<std::pair<std::string, std::string>> graphfuse_attrs_;  ///< "node:attr" -> value
  std::vector<InferredType> inferred_;  ///< from infer_value_types, in graph order
  std::string inference_error_;          ///< why shape inference failed, if it did
};

}  // namespace

namespace {

std::string op_of(const onnx::NodeProto& n) {
  return n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type();
}

std::string node_label(const onnx::NodeProto& n, int index) {
  return "node '" + (n.name().empty() ? "#" + std::to_string(index) : n.name()) + "' (" + op_of(n) + ")";
}

// A declared tensor type graphfuse keeps must be one every writer can write back:
// element type a non-negative int32, dimensions >= 0 (an unknown one has no dim_value).
void check_declared_type(const onnx::ValueInfoProto& vi, const std::string& what) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() < 0) throw Error(what + " has a negative element type " + std::to_string(tt.elem_type()));
  if (tt.has_shape())
    for (const auto& d : tt.shape().dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        throw Error(what + " has a negative dimension " + std::to_string(d.dim_value()));
}

// An initializer's shape and data must agree before inference reads it: libonnx's Conv
// inference (convPoolShapeInference) crashed on a weight whose dims, packed and unpacked
// mixed, described a rank-40 tensor of 0 elements holding 48 bytes.
void check_initializer(const onnx::TensorProto& t, const TensorSources& sources) {
  const std::string what = "initializer '" + t.name() + "'";
  std::uint64_t count = 1;
  for (auto d : t.dims()) {
    if (d < 0) throw Error(what + ": negative dimension " + std::to_string(d));
    if (d != 0 && count > static_cast<std::uint64_t>(checks::kMaxTensorElements) / static_cast<std::uint64_t>(d))
      throw Error(what + ": shape is too large (more than 2^40 elements)");
    count *= static_cast<std::uint64_t>(d);
  }
  if (!tensor_supported(t) || t.data_location() == onnx::TensorProto::EXTERNAL) return;  // the importer decides
  const auto dt = static_cast<DType>(t.data_type());
  std::uint64_t have = 0;
  const auto left_in_file = sources.raw.find(&t);  // raw_data the wire reader left in the file
  if (left_in_file != sources.raw.end() || t.has_raw_data()) {
    const std::uint64_t raw = left_in_file != sources.raw.end() ? left_in_file->second.second : t.raw_data().size();
    have = raw / dtype_size(dt);
    if (raw % dtype_size(dt) != 0) have = count + 1;  // a partial element never matches
  } else {
    switch (dt) {
      case DType::Float32: have = static_cast<std::uint64_t>(t.float_data_size()); break;
      case DType::Float64: have = static_cast<std::uint64_t>(t.double_data_size()); break;
      case DType::Int64: have = static_cast<std::uint64_t>(t.int64_data_size()); break;
      case DType::UInt64: case DType::UInt32: have = static_cast<std::uint64_t>(t.uint64_data_size()); break;
      default: have = static_cast<std::uint64_t>(t.int32_data_size()); break;
    }
  }
  if (have != count)
    throw Error(what + ": its data holds " + std::to_string(have) + " elements, its shape (rank " +
                std::to_string(t.dims_size()) + ") " + std::to_string(count));
}

// What must hold before libonnx's shape inference sees the model: it trusts its input and
// crashes on some malformed graphs (SIGSEGV in Shape's data propagation on an untyped graph
// input). ONNX's checker requires all of this too; checking it here, with the node named,
// turns a crash into an error. The importer repeats the reference checks with ids.
void check_before_inference(const onnx::ModelProto& model, const TensorSources& sources) {
  if (!model.has_graph()) throw Error("the model has no graph");
  const onnx::GraphProto& gp = model.graph();
  std::unordered_set<std::string> defined, initializers;
  for (const auto& t : gp.initializer()) {
    if (t.name().empty()) throw Error("an initializer has no name");
    check_initializer(t, sources);
    initializers.insert(t.name());
  }
  // The first node reading each name, to say who reads an untyped input.
  std::unordered_map<std::string, int> first_reader;
  for (int i = 0; i < gp.node_size(); ++i)
    for (const auto& in : gp.node(i).input()) first_reader.emplace(in, i);
  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) throw Error("a graph input has no name");
    if (!defined.insert(vi.name()).second) throw Error("graph input '" + vi.name() + "' is declared twice");
    std::string what = "graph input '" + vi.name() + "'";
    if (auto it = first_reader.find(vi.name()); it != first_reader.end())
      what += " (read by " + node_label(gp.node(it->second), it->second) + ")";
    check_declared_type(vi, what);
    if (initializers.count(vi.name())) continue;  // a default value: the initializer types it
    if (!vi.has_type() || vi.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
      throw Error(what + " has no type; ONNX requires one on every graph input");
    if (vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() == 0)
      throw Error(what + " has no element type; ONNX requires one on every graph input");
  }
  for (const auto& name : initializers)
    if (!defined.insert(name).second && !std::any_of(gp.input().begin(), gp.input().end(),
                                                     [&](const auto& vi) { return vi.name() == name; }))
      throw Error("initializer '" + name + "' is defined more than once");
  for (int i = 0; i < gp.node_size(); ++i)
    for (const auto& out : gp.node(i).output())
      if (!out.empty() && !defined.insert(out).second)
        throw Error(node_label(gp.node(i), i) + ": value '" + out + "' is defined more than once");
  for (int i = 0; i < gp.node_size(); ++i)
    for (const auto& in : gp.node(i).input())
      if (!in.empty() && !defined.count(in))
        throw Error(node_label(gp.node(i), i) + ": input '" + in +
                    "' is not a graph input, an initializer or any node's output");
  // libonnx's Conv inference (convPoolShapeInference) indexes the input's per-dimension
  // attributes with the weight's dimensions: a weight of higher rank than the input reads
  // past them (SIGSEGV, fuzz/crashes/onnx/crash-libonnx-convpool-shape-inference.onnx).
  // Ranks known from the file (typed graph inputs, initializers) are compared here; ranks
  // of computed values are known only inside inference, so this does not cover those.
  std::unordered_map<std::string, int> rank;
  for (const auto& vi : gp.input())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      rank[vi.name()] = vi.type().tensor_type().shape().dim_size();
  for (const auto& t : gp.initializer()) rank[t.name()] = t.dims_size();
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& n = gp.node(i);
    const int wi = conv_weight_input(n.domain(), n.op_type());
    if (wi < 0 || n.input_size() <= wi) continue;
    auto x = rank.find(n.input(0)), w = rank.find(n.input(wi));
    if (x != rank.end() && w != rank.end() && x->second != w->second)
      throw Error(node_label(n, i) + ": weight '" + n.input(wi) + "' has rank " + std::to_string(w->second) +
                  ", input '" + n.input(0) + "' rank " + std::to_string(x->second) + " (they must be equal)");
  }
  for (const auto& vi : gp.output()) check_declared_type(vi, "graph output '" + vi.name() + "'");
  for (const auto& vi : gp.value_info()) check_declared_type(vi, "value_info '" + vi.name() + "'");
}

}  // namespace

namespace {
// A model own_inference_suffices() chose is typed by graphfuse's pass alone; a node it still
// left untyped (an input it could not read, a degenerate attribute) gets libonnx's
// per-node inference, as a node a rule creates would.
void type_what_the_own_pass_left(Graph& g) {
  std::unique_ptr<const TypeInference> types;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.op.name() == ops::kInput || n.op.name() == ops::kConst) continue;
    bool open = false;
    for (std::size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k].type.dtype == DType::Undefined && !n.outputs[k].type.shape_known &&
          !g.is_output(ValueRef{id, static_cast<std::uint32_t>(k)}))
        open = true;
    if (!open) continue;
    if (!types) types = make_onnx_type_inference(g);
    if (types) types->infer(g, id);
  }
}
}  // namespace

Graph graph_from_model(onnx::ModelProto& model, const std::string& file, const std::string& model_dir,
                       TensorSources* sources) {
  TensorSources none;
  if (!sources) sources = &none;
  try {
    check_before_inference(model, *sources);
    // Inference reads the model before the importer consumes it (moves tensor bytes out).
    std::string inference_error;
    std::vector<InferredType> inferred;
    const bool own_types = own_inference_suffices(model);
    if (!own_types) inferred = infer_value_types(model, &inference_error);
    const std::string external = first_external_location(model.graph());
    Graph g = Importer(file, model_dir, std::move(inferred), std::move(inference_error), *sources).run(model);
    if (own_types) type_what_the_own_pass_left(g);
    // The form the model came in, which export keeps (docs/big-models.md).
    if (!external.empty()) g.properties().set(std::string(kExternalData), external);
    return g;
  } catch (const Error& e) {
    // Conversions deep down do not know the file; every import error should name it.
    if (!e.loc().file.empty()) throw;
    throw Error(SourceLoc{file}, e.message());
  }
}

}  // namespace graphfuse::onnx_io

namespace graphfuse {

Graph load_onnx(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  onnx_io::TensorSources sources;
  sources.model = io::MappedInput::open(path, false);
  if (!sources.model) {  // not a regular file, empty, unreadable: read_model_proto says which
    onnx::ModelProto model = onnx_io::read_model_proto(path);
    return onnx_io::graph_from_model(model, path, dir);
  }
  onnx::ModelProto model = onnx_io::parse_mapped_model(*sources.model, path, sources);
  return onnx_io::graph_from_model(model, path, dir, &sources);
}

}  // namespace graphfuse
