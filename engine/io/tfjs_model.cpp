// TF.js graph models: model.json, whose modelTopology is a GraphDef in protobuf's JSON form
// (camelCase fields, int64 as strings, bytes as base64), and the weight shards beside it.
// The topology goes through the same GraphDef conversion as a .pb (graphdef_convert.cpp);
// the weights fill the Const nodes' tensors.
#include <google/protobuf/util/json_util.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "graphfuse/io.h"
#include "graphfuse/tensorflow.h"
#include "io/graphdef_convert.h"
#include "io/tfjs_weights.h"

namespace graphfuse {

namespace {

using tf_io::Json;

// Graph properties of a graph read from a TF.js model.
constexpr std::string_view kModel = "tfjs.model";              ///< string: model.json less topology and weights
constexpr std::string_view kTopologyLibrary = "tfjs.library";  ///< string: modelTopology.library (JSON)
constexpr std::string_view kWeightOrder = "tfjs.weight_order";  ///< strings: the manifest's order
constexpr std::string_view kShardBytes = "tfjs.shard_bytes";    ///< int: the first shard's size
constexpr std::string_view kShardNames = "tfjs.shard_names";    ///< strings: the first group's paths

[[noreturn]] void fail(const std::string& file, const std::string& msg) { throw Error(SourceLoc{file}, msg); }

SourceLoc json_position(const std::string& file, const std::string& text, std::size_t byte) {
  SourceLoc loc{file};
  loc.line = 1;
  loc.column = 1;
  for (std::size_t k = 0; k < byte && k < text.size(); ++k) {
    if (text[k] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

template <class Message>
void from_json(const Json& j, Message& m, const std::string& file, const std::string& where) {
  auto status = google::protobuf::util::JsonStringToMessage(j.dump(), &m);
  if (!status.ok()) fail(file, where + ": " + std::string(status.message()));
}

template <class Message>
Json to_json(const Message& m) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(m, &text, options);
  return Json::parse(text);
}

tf::GraphDef topology_to_graphdef(const Json& topo, const std::string& file) {
  tf::GraphDef gd;
  if (!topo.is_object()) fail(file, "modelTopology is not an object");
  if (auto nodes = topo.find("node"); nodes != topo.end()) {
    if (!nodes->is_array()) fail(file, "modelTopology.node is not a list");
    for (std::size_t k = 0; k < nodes->size(); ++k) {
      const Json& n = (*nodes)[k];
      std::string where = "modelTopology.node[" + std::to_string(k) + "]";
      if (!n.is_object()) fail(file, where + " is not an object");
      tf::NodeDef& nd = *gd.add_node();
      for (const auto& [key, value] : n.items()) {
        if (key == "name" || key == "op" || key == "device") {
          if (!value.is_string()) fail(file, where + ": \"" + key + "\" is not a string");
          (key == "name" ? *nd.mutable_name() : key == "op" ? *nd.mutable_op() : *nd.mutable_device()) =
              value.get<std::string>();
        } else if (key == "input") {
          if (!value.is_array()) fail(file, where + ": \"input\" is not a list");
          for (const Json& in : value) {
            if (!in.is_string()) fail(file, where + ": an input is not a string");
            nd.add_input(in.get<std::string>());
          }
        } else if (key == "attr") {
          if (!value.is_object()) fail(file, where + ": \"attr\" is not an object");
          for (const auto& [aname, avalue] : value.items()) {
            tf::AttrEntry& e = *nd.add_attr();
            e.set_key(aname);
            from_json(avalue, *e.mutable_value(), file, where + " attribute '" + aname + "'");
          }
        }
        // experimentalDebugInfo and experimentalType carry nothing graphfuse needs.
      }
    }
  }
  if (auto v = topo.find("versions"); v != topo.end()) from_json(*v, *gd.mutable_versions(), file, "modelTopology.versions");
  return gd;
}

Json graphdef_to_topology(const tf::GraphDef& gd, const Graph& g) {
  Json nodes = Json::array();
  for (const tf::NodeDef& nd : gd.node()) {
    Json n = Json::object();
    n["name"] = nd.name();
    n["op"] = nd.op();
    if (nd.input_size() > 0) n["input"] = Json(std::vector<std::string>(nd.input().begin(), nd.input().end()));
    if (!nd.device().empty()) n["device"] = nd.device();
    if (nd.attr_size() > 0) {
      Json attrs = Json::object();
      for (const tf::AttrEntry& e : nd.attr()) attrs[e.key()] = to_json(e.value());
      n["attr"] = std::move(attrs);
    }
    nodes.push_back(std::move(n));
  }
  Json topo = Json::object();
  topo["node"] = std::move(nodes);
  const Attributes& p = g.properties();
  if (const auto* lib = p.get_if<std::string>(kTopologyLibrary)) topo["library"] = Json::parse(*lib);
  if (gd.has_versions()) topo["versions"] = to_json(gd.versions());
  return topo;
}

tf::DataType weight_tf_dtype(DType t) { return tf_io::dtype_to_tf(t); }

// The signature's outputs ("name:port", top level or in userDefinedMetadata) are what an app
// fetches; one that other nodes also read is no sink, so it is made a graph output here, kept
// by every rewrite under its name.
// int64 element bytes -> int32 ones in place; false (bytes unchanged) when a value does not fit.
bool narrow_int64(std::string& bytes) {
  const std::size_t n = bytes.size() / 8;
  std::string out(n * 4, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t v;
    std::memcpy(&v, bytes.data() + 8 * i, 8);
    if (v < INT32_MIN || v > INT32_MAX) return false;
    auto v32 = static_cast<std::int32_t>(v);
    std::memcpy(out.data() + 4 * i, &v32, 4);
  }
  bytes = std::move(out);
  return true;
}

void add_signature_outputs(Graph& g, const Json& model, const std::string& file) {
  const Json* sig = nullptr;
  if (auto s = model.find("signature"); s != model.end()) sig = &*s;
  else if (auto m = model.find("userDefinedMetadata"); m != model.end() && m->is_object())
    if (auto s2 = m->find("signature"); s2 != m->end()) sig = &*s2;
  if (!sig || !sig->is_object()) return;
  auto outs = sig->find("outputs");
  if (outs == sig->end() || !outs->is_object()) return;
  auto* names = g.properties().find(tf_io::kOutputNames);
  auto* list = names ? std::get_if<std::vector<std::string>>(names) : nullptr;
  for (const auto& [key, value] : outs->items()) {
    // The key is a logical name ("output_0") or the tensor's; the entry's "name" is the tensor.
    auto tensor = value.is_object() ? value.find("name") : value.end();
    std::string name = value.is_object() && tensor != value.end() && tensor->is_string() ? tensor->get<std::string>() : key;
    std::uint32_t port = 0;
    if (auto colon = name.rfind(':'); colon != std::string::npos) {
      try {
        port = static_cast<std::uint32_t>(std::stoul(name.substr(colon + 1)));
      } catch (const std::exception&) {
        fail(file, "signature output '" + name + "' is not 'name:port'");
      }
      name = name.substr(0, colon);
    }
    auto n = g.find(name);
    if (!n || port >= g.node(*n).outputs.size()) continue;  // metadata naming nothing: TF.js would fail on it, not graphfuse
    ValueRef v{*n, port};
    if (g.is_output(v)) continue;
    g.add_output(v);
    if (list) list->push_back(name);
  }
}

}  // namespace

Graph load_tfjs_model(const std::string& path) {
  std::string text = read_file(path);
  Json model;
  try {
    model = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw Error(json_position(path, text, e.byte == 0 ? 0 : e.byte - 1), std::string("not valid JSON: ") + e.what());
  }
  if (!model.is_object()) fail(path, "a TF.js model.json is a JSON object");
  auto topo = model.find("modelTopology");
  if (topo == model.end()) fail(path, "no modelTopology (a TF.js layers model, or not a TF.js model?)");
  if (auto fmt = model.find("format"); fmt != model.end() && *fmt != "graph-model")
    fail(path, "format " + fmt->dump() + ": graphfuse reads TF.js graph models (format \"graph-model\")");
  tf::GraphDef gd = topology_to_graphdef(*topo, path);

  std::string dir = std::filesystem::path(path).parent_path().string();
  Json none;
  auto manifest = model.find("weightsManifest");
  std::vector<tf_io::TfjsWeight> weights =
      tf_io::read_tfjs_weights(manifest != model.end() ? *manifest : none, dir.empty() ? "." : dir, path);
  std::unordered_map<std::string, tf::NodeDef*> consts;
  for (tf::NodeDef& nd : *gd.mutable_node())
    if (nd.op() == "Const") consts.emplace(nd.name(), &nd);
  std::vector<std::string> order;
  for (tf_io::TfjsWeight& w : weights) {
    auto it = consts.find(w.name);
    if (it == consts.end()) fail(path, "weight '" + w.name + "' names no Const node of the topology");
    tf::NodeDef& nd = *it->second;
    tf::AttrValue* value = nullptr;
    for (tf::AttrEntry& e : *nd.mutable_attr())
      if (e.key() == "value") value = e.mutable_value();
    if (!value) {
      tf::AttrEntry& e = *nd.add_attr();
      e.set_key("value");
      value = e.mutable_value();
    }
    tf::TensorProto& t = *value->mutable_tensor();
    const tf::DataType written = t.dtype();
    t.Clear();
    t.set_dtype(weight_tf_dtype(w.tensor.dtype));
    if (written != tf::DT_INVALID && written != t.dtype()) {
      tf::AttrEntry& d = *nd.add_attr();
      d.set_key(std::string(tf_io::kTfjsTopologyDtype));
      d.mutable_value()->set_i(written);
    }
    for (auto d : w.tensor.shape) t.mutable_tensor_shape()->add_dim()->set_size(d);
    t.set_tensor_content(w.tensor.data->data(), w.tensor.data->size());
    if (!w.quantization.empty()) {
      tf::AttrEntry& q = *nd.add_attr();
      q.set_key(std::string(tf_io::kTfjsQuantization));
      q.mutable_value()->set_s(w.quantization);
    }
    order.push_back(w.name);
    consts.erase(it);  // a second weight of the same name is an error too
  }

  Graph g = tf_io::graphdef_to_graph(gd, path);
  Attributes& p = g.properties();
  add_signature_outputs(g, model, path);
  if (auto lib = topo->find("library"); lib != topo->end()) p.set(std::string(kTopologyLibrary), lib->dump());
  p.set(std::string(kWeightOrder), std::move(order));
  if (manifest != model.end() && manifest->is_array() && !manifest->empty()) {
    const Json& paths = (*manifest)[0]["paths"];
    p.set(std::string(kShardNames), paths.get<std::vector<std::string>>());
    // The first shard's size is where the input cut its shards; a model with one shard (a
    // human-models .bin over TF.js's 4 MiB default) keeps it whole.
    if (!paths.empty()) {
      std::error_code ec;
      auto size = std::filesystem::file_size(std::filesystem::path(dir.empty() ? "." : dir) / paths[0].get<std::string>(), ec);
      if (!ec) p.set(std::string(kShardBytes), static_cast<std::int64_t>(size));
    }
  }
  // The rest of model.json (format, generatedBy, signature, ...) in its order, with the
  // two parts graphfuse writes anew left as placeholders.
  *topo = nullptr;
  if (manifest != model.end()) *manifest = nullptr;
  p.set(std::string(kModel), model.dump());
  return g;
}

void save_tfjs_model(const Graph& g, const std::string& path) {
  tf::GraphDef gd = tf_io::graph_to_graphdef(g);
  std::vector<tf_io::TfjsWeight> weights;
  std::unordered_map<std::string, std::size_t> index;
  for (tf::NodeDef& nd : *gd.mutable_node()) {
    if (nd.op() != "Const") continue;
    for (tf::AttrEntry& e : *nd.mutable_attr()) {
      if (e.key() != "value" || !e.value().has_tensor()) continue;
      tf_io::TfjsWeight w;
      w.name = nd.name();
      std::string bytes, why;
      tf::TensorProto& t = *e.mutable_value()->mutable_tensor();
      if (!tf_io::tensor_bytes(t, w.tensor.dtype, w.tensor.shape, bytes, why))
        fail(path, "Const '" + nd.name() + "': " + why + " cannot be a TF.js weight");
      if (w.tensor.dtype == DType::Int64 && narrow_int64(bytes)) {
        // A rule-made index constant (a Transpose perm, a Reshape shape): TF.js's converter
        // stores int64 weights as int32 too.
        w.tensor.dtype = DType::Int32;
        t.set_dtype(tf::DT_INT32);
        for (tf::AttrEntry& a : *nd.mutable_attr())
          if (a.key() == "dtype" && a.value().type() == tf::DT_INT64) a.mutable_value()->set_type(tf::DT_INT32);
      }
      if (w.tensor.dtype != DType::Float32 && w.tensor.dtype != DType::Int32 && w.tensor.dtype != DType::Bool)
        fail(path, "Const '" + nd.name() + "' is " + std::string(dtype_name(w.tensor.dtype)) +
                       "; TF.js weights are float32, int32 or bool");
      w.tensor.data = std::make_shared<const std::string>(std::move(bytes));
      if (auto n = g.find(nd.name())) {
        if (const auto* q = g.node(*n).attrs.get_if<std::string>(tf_io::kTfjsQuantization)) w.quantization = *q;
        const auto* d = g.node(*n).attrs.get_if<std::int64_t>(tf_io::kTfjsTopologyDtype);
        if (d && tf::DataType_IsValid(static_cast<int>(*d))) t.set_dtype(static_cast<tf::DataType>(*d));
      }
      // The topology keeps the tensor's type and shape; its elements live in the shards.
      t.clear_tensor_content();
      t.clear_float_val();
      t.clear_int_val();
      t.clear_bool_val();
      index.emplace(w.name, weights.size());
      weights.push_back(std::move(w));
    }
  }
  // The input's manifest order first, so an unchanged model's shards come back byte for byte.
  std::vector<tf_io::TfjsWeight> ordered;
  ordered.reserve(weights.size());
  std::vector<bool> taken(weights.size(), false);
  if (const auto* order = g.properties().get_if<std::vector<std::string>>(kWeightOrder))
    for (const std::string& name : *order)
      if (auto it = index.find(name); it != index.end() && !taken[it->second]) {
        taken[it->second] = true;
        ordered.push_back(std::move(weights[it->second]));
      }
  for (std::size_t k = 0; k < weights.size(); ++k)
    if (!taken[k]) ordered.push_back(std::move(weights[k]));

  std::string dir = std::filesystem::path(path).parent_path().string();
  const auto* shard = g.properties().get_if<std::int64_t>(kShardBytes);
  const auto* names = g.properties().get_if<std::vector<std::string>>(kShardNames);
  Json manifest = tf_io::write_tfjs_weights(ordered, dir.empty() ? "." : dir, shard ? *shard : 4194304,
                                            names ? *names : std::vector<std::string>{});

  Json model = Json::object();
  if (const auto* rest = g.properties().get_if<std::string>(kModel)) model = Json::parse(*rest);
  if (model.empty()) {
    model["format"] = "graph-model";
    model["generatedBy"] = "graphfuse";
    model["convertedBy"] = "graphfuse";
  }
  model["modelTopology"] = graphdef_to_topology(gd, g);
  model["weightsManifest"] = std::move(manifest);
  write_file_atomic(path, model.dump());
}

}  // namespace graphfuse
