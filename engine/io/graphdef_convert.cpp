// TensorFlow GraphDef <-> Graph: nodes, value references ("name", "name:k", "^name"),
// attributes typed as TensorFlow types them, and tensors. docs/tensorflow.md.
#include "io/graphdef_convert.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "graph/value_checks.h"

namespace graphfuse::tf_io {

static_assert(std::endian::native == std::endian::little, "graphfuse assumes a little-endian host");

DType dtype_from_tf(tf::DataType t) {
  switch (t) {
    case tf::DT_FLOAT: return DType::Float32;
    case tf::DT_DOUBLE: return DType::Float64;
    case tf::DT_INT32: return DType::Int32;
    case tf::DT_UINT8: return DType::UInt8;
    case tf::DT_INT16: return DType::Int16;
    case tf::DT_INT8: return DType::Int8;
    case tf::DT_INT64: return DType::Int64;
    case tf::DT_BOOL: return DType::Bool;
    case tf::DT_BFLOAT16: return DType::BFloat16;
    case tf::DT_UINT16: return DType::UInt16;
    case tf::DT_HALF: return DType::Float16;
    case tf::DT_UINT32: return DType::UInt32;
    case tf::DT_UINT64: return DType::UInt64;
    default: return DType::Undefined;
  }
}

tf::DataType dtype_to_tf(DType t) {
  switch (t) {
    case DType::Float32: return tf::DT_FLOAT;
    case DType::Float64: return tf::DT_DOUBLE;
    case DType::Int32: return tf::DT_INT32;
    case DType::UInt8: return tf::DT_UINT8;
    case DType::Int16: return tf::DT_INT16;
    case DType::Int8: return tf::DT_INT8;
    case DType::Int64: return tf::DT_INT64;
    case DType::Bool: return tf::DT_BOOL;
    case DType::BFloat16: return tf::DT_BFLOAT16;
    case DType::UInt16: return tf::DT_UINT16;
    case DType::Float16: return tf::DT_HALF;
    case DType::UInt32: return tf::DT_UINT32;
    case DType::UInt64: return tf::DT_UINT64;
    default: return tf::DT_INVALID;
  }
}

namespace {

// Appends n elements of type Stored, each narrowed or widened to Elem, repeating the last
// value up to `count` (TensorFlow's short-list convention; an empty list means zeros).
template <class Elem, class Field>
bool expand(const Field& field, std::int64_t count, std::string& bytes, std::string& why) {
  auto n = static_cast<std::int64_t>(field.size());
  if (n > count) {
    why = std::to_string(n) + " values for " + std::to_string(count) + " elements";
    return false;
  }
  bytes.resize(static_cast<std::size_t>(count) * sizeof(Elem));
  auto* out = reinterpret_cast<Elem*>(bytes.data());
  for (std::int64_t k = 0; k < count; ++k) {
    Elem e{};
    if (n > 0) e = static_cast<Elem>(field.Get(static_cast<int>(k < n ? k : n - 1)));
    std::memcpy(out + k, &e, sizeof e);
  }
  return true;
}

}  // namespace

bool tensor_bytes(const tf::TensorProto& t, DType& dtype, std::vector<std::int64_t>& shape, std::string& bytes,
                  std::string& why) {
  dtype = dtype_from_tf(t.dtype());
  if (dtype == DType::Undefined) {
    why = "element type " + tf::DataType_Name(t.dtype());
    return false;
  }
  if (t.tensor_shape().unknown_rank()) {
    why = "a shape of unknown rank";
    return false;
  }
  shape.clear();
  for (const auto& d : t.tensor_shape().dim()) shape.push_back(d.size());
  if (std::string p = checks::tensor_shape_problem(shape); !p.empty()) {
    why = p;
    return false;
  }
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  std::size_t size = dtype_size(dtype);
  if (!t.tensor_content().empty()) {
    if (t.tensor_content().size() != static_cast<std::size_t>(count) * size) {
      why = std::to_string(t.tensor_content().size()) + " content bytes for " + std::to_string(count) + " " +
            std::string(dtype_name(dtype)) + " elements";
      return false;
    }
    bytes = t.tensor_content();
    return true;
  }
  switch (dtype) {
    case DType::Float32: return expand<float>(t.float_val(), count, bytes, why);
    case DType::Float64: return expand<double>(t.double_val(), count, bytes, why);
    case DType::Int32: return expand<std::int32_t>(t.int_val(), count, bytes, why);
    case DType::UInt8: return expand<std::uint8_t>(t.int_val(), count, bytes, why);
    case DType::Int16: return expand<std::int16_t>(t.int_val(), count, bytes, why);
    case DType::Int8: return expand<std::int8_t>(t.int_val(), count, bytes, why);
    case DType::UInt16: return expand<std::uint16_t>(t.int_val(), count, bytes, why);
    case DType::Int64: return expand<std::int64_t>(t.int64_val(), count, bytes, why);
    case DType::Bool: return expand<bool>(t.bool_val(), count, bytes, why);
    case DType::Float16:
    case DType::BFloat16: return expand<std::uint16_t>(t.half_val(), count, bytes, why);
    case DType::UInt32: return expand<std::uint32_t>(t.uint32_val(), count, bytes, why);
    case DType::UInt64: return expand<std::uint64_t>(t.uint64_val(), count, bytes, why);
    default: break;
  }
  why = "element type " + tf::DataType_Name(t.dtype());
  return false;
}

namespace {

// ---- reading ------------------------------------------------------------------------

AttrValue attr_from_tf(const tf::AttrValue& v) {
  switch (v.value_case()) {
    case tf::AttrValue::kS: return v.s();
    case tf::AttrValue::kI: return static_cast<std::int64_t>(v.i());
    case tf::AttrValue::kF: return v.f();
    case tf::AttrValue::kB: return v.b();
    case tf::AttrValue::kTensor: {
      Tensor t;
      std::string bytes, why;
      // Element types graphfuse has no counterpart for (string, complex, quantized,
      // resource) stay as TensorFlow wrote them; a numeric tensor must be well formed.
      if (dtype_from_tf(v.tensor().dtype()) == DType::Undefined)
        return Opaque{std::string(kOpaqueTensor), v.tensor().SerializeAsString()};
      if (!tensor_bytes(v.tensor(), t.dtype, t.shape, bytes, why)) throw Error(SourceLoc{}, "tensor with " + why);
      t.data = std::make_shared<const std::string>(std::move(bytes));
      return t;
    }
    case tf::AttrValue::kList: {
      const auto& l = v.list();
      int kinds = (l.s_size() > 0) + (l.i_size() > 0) + (l.f_size() > 0) + (l.b_size() > 0);
      bool others = l.type_size() > 0 || l.shape_size() > 0 || l.tensor_size() > 0 || l.func_size() > 0;
      if (!others && kinds == 0) return std::vector<std::int64_t>{};
      if (!others && kinds == 1) {
        if (l.s_size() > 0) return std::vector<std::string>(l.s().begin(), l.s().end());
        if (l.i_size() > 0) return std::vector<std::int64_t>(l.i().begin(), l.i().end());
        if (l.f_size() > 0) return std::vector<float>(l.f().begin(), l.f().end());
        return std::vector<bool>(l.b().begin(), l.b().end());
      }
      break;
    }
    default: break;
  }
  // type, shape, func, placeholder and lists of those: kept as TensorFlow wrote them.
  return Opaque{std::string(kOpaqueAttr), v.SerializeAsString()};
}

struct Ref {
  std::size_t node;
  std::uint32_t port;
};

class Reader {
 public:
  Reader(tf::GraphDef& gd, const std::string& file) : gd_(gd), file_(file) {}

  Graph run() {
    index_names();
    resolve_inputs();
    std::vector<std::size_t> order = topological();
    g_.reserve(order.size());
    for (std::size_t k : order) add(k);
    add_outputs();
    keep_graph_fields();
    g_.source_file = file_;
    g_.validate();
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { throw Error(SourceLoc{file_}, msg); }
  std::string node_desc(std::size_t k) const { return "node '" + gd_.node(static_cast<int>(k)).name() + "'"; }

  void index_names() {
    auto n = static_cast<std::size_t>(gd_.node_size());
    if (n > checks::kMaxNodes) fail("the GraphDef has " + std::to_string(n) + " nodes, more than graphfuse holds");
    index_.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      const tf::NodeDef& nd = gd_.node(static_cast<int>(k));
      if (nd.name().empty()) fail("node #" + std::to_string(k) + " (op '" + nd.op() + "') has no name");
      if (nd.op().empty()) fail(node_desc(k) + " has no op");
      if (nd.name().find(':') != std::string::npos || nd.name()[0] == '^')
        fail(node_desc(k) + ": a node name may not contain ':' or start with '^'");
      if (!index_.emplace(nd.name(), k).second) fail("two nodes are named '" + nd.name() + "'");
    }
  }

  void resolve_inputs() {
    auto n = static_cast<std::size_t>(gd_.node_size());
    data_.resize(n);
    control_.resize(n);
    outputs_.assign(n, 1);
    read_.assign(n, false);
    ids_.assign(n, kNoNode);
    back_.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::size_t position = 0;  // of the data input, back edges counted
      for (const std::string& in : gd_.node(static_cast<int>(k)).input()) {
        if (!in.empty() && in[0] == '^') {
          control_[k].push_back(producer(k, in.substr(1), in));
          read_[control_[k].back()] = true;
          continue;
        }
        if (!control_[k].empty()) fail(node_desc(k) + ": data input '" + in + "' after a control input");
        std::string_view name = in;
        std::uint32_t port = 0;
        if (auto colon = name.rfind(':'); colon != std::string_view::npos) {
          std::string_view digits = name.substr(colon + 1);
          auto r = std::from_chars(digits.data(), digits.data() + digits.size(), port);
          if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || port >= (1u << 20))
            fail(node_desc(k) + ": input '" + in + "' is not 'name', 'name:port' or '^name'");
          name = name.substr(0, colon);
        }
        std::size_t p = producer(k, std::string(name), in);
        if (is_back_edge(p, k)) {
          // Kept aside (the NextIteration stays a sink, so a graph output) and written back.
          back_[k].push_back(std::to_string(position++) + " " + in);
          continue;
        }
        ++position;
        data_[k].push_back({p, port});
        outputs_[p] = std::max(outputs_[p], port + 1);
        read_[p] = true;
      }
    }
  }

  // A TF1 while loop closes its cycle with NextIteration -> Merge; that edge alone is cut.
  bool is_back_edge(std::size_t producer, std::size_t consumer) const {
    return gd_.node(static_cast<int>(consumer)).op() == "Merge" &&
           gd_.node(static_cast<int>(producer)).op() == "NextIteration";
  }

  std::size_t producer(std::size_t k, const std::string& name, const std::string& as_written) const {
    auto it = index_.find(name);
    if (it == index_.end()) fail(node_desc(k) + " reads '" + as_written + "', which no node produces");
    return it->second;
  }

  // Producers first; nodes keep the file's order where the file is already in one (an
  // iterative depth-first walk, so a long chain cannot exhaust the stack). TF1 while
  // loops are acyclic once their NextIteration -> Merge edges are set aside; any other
  // cycle is refused.
  std::vector<std::size_t> topological() const {
    auto n = static_cast<std::size_t>(gd_.node_size());
    std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 placed
    std::vector<std::size_t> order;
    order.reserve(n);
    std::vector<std::pair<std::size_t, std::size_t>> stack;  // node, next input to visit
    for (std::size_t root = 0; root < n; ++root) {
      if (state[root]) continue;
      stack.push_back({root, 0});
      state[root] = 1;
      while (!stack.empty()) {
        auto& [k, next] = stack.back();
        if (next < data_[k].size()) {
          std::size_t p = data_[k][next++].node;
          if (state[p] == 1)
            fail("the GraphDef has a cycle through " + node_desc(p) +
                 " (only a TF1 while loop's NextIteration -> Merge edge may close a cycle)");
          if (state[p] == 0) {
            state[p] = 1;
            stack.push_back({p, 0});
          }
          continue;
        }
        state[k] = 2;
        order.push_back(k);
        stack.pop_back();
      }
    }
    return order;
  }

  void add(std::size_t k) {
    tf::NodeDef& nd = *gd_.mutable_node(static_cast<int>(k));
    Attributes attrs;
    for (const tf::AttrEntry& e : nd.attr()) {
      if (e.key().empty()) fail(node_desc(k) + " has an attribute with no name");
      if (attrs.has(e.key())) fail(node_desc(k) + " has two attributes named '" + e.key() + "'");
      try {
        attrs.set(e.key(), attr_from_tf(e.value()));
      } catch (const Error& err) {
        fail(node_desc(k) + " attribute '" + e.key() + "': " + err.message());
      }
    }
    if (!nd.device().empty()) attrs.set(std::string(kDevice), nd.device());
    if (!control_[k].empty()) {
      std::vector<std::string> names;
      for (std::size_t c : control_[k]) names.push_back(gd_.node(static_cast<int>(c)).name());
      attrs.set(std::string(kControlInputs), std::move(names));
    }
    if (!back_[k].empty()) attrs.set(std::string(kBackEdges), back_[k]);
    NodeId id;
    if (nd.op() == "Placeholder" && data_[k].empty() && outputs_[k] == 1) {
      id = g_.add_input(nd.name(), placeholder_type(attrs));
      g_.attrs(id) = std::move(attrs);
    } else {
      InputList inputs;
      for (const Ref& r : data_[k]) {
        if (r.port >= outputs_[r.node]) fail(node_desc(k) + " reads a port its producer does not have");
        inputs.push_back(ValueRef{ids_[r.node], r.port});
      }
      id = g_.add_node(nd.name(), OpType::intern(nd.op()), std::move(inputs), std::move(attrs), outputs_[k]);
    }
    ids_[k] = id;
  }

  static ValueType placeholder_type(const Attributes& attrs) {
    ValueType t;
    const Opaque* dt = attrs.get_if<Opaque>("dtype");
    tf::AttrValue v;
    if (dt && dt->kind == kOpaqueAttr && v.ParseFromString(dt->bytes) && v.has_type())
      t.dtype = dtype_from_tf(v.type());
    const Opaque* sh = attrs.get_if<Opaque>("shape");
    if (sh && sh->kind == kOpaqueAttr && v.ParseFromString(sh->bytes) && v.has_shape() && !v.shape().unknown_rank()) {
      t.shape_known = true;
      for (const auto& d : v.shape().dim()) t.shape.push_back(d.size() < 0 ? -1 : d.size());
    }
    if (!checks::value_type_problem(t).empty()) {
      ValueType dtype_only;
      dtype_only.dtype = t.dtype;
      return dtype_only;
    }
    return t;
  }

  void add_outputs() {
    std::vector<std::string> names;
    for (std::size_t k = 0; k < ids_.size(); ++k)
      if (!read_[k]) {
        g_.add_output(ValueRef{ids_[k], 0});
        names.push_back(gd_.node(static_cast<int>(k)).name());
      }
    g_.properties().set(std::string(kOutputNames), std::move(names));
  }

  void keep_graph_fields() {
    Attributes& p = g_.properties();
    if (gd_.has_versions()) p.set(std::string(kVersions), Opaque{"tf.VersionDef", gd_.versions().SerializeAsString()});
    if (!gd_.library().empty()) p.set(std::string(kLibrary), Opaque{"tf.FunctionDefLibrary", gd_.library()});
    if (gd_.version() != 0) p.set(std::string(kVersion), static_cast<std::int64_t>(gd_.version()));
    gd_.clear_node();
    gd_.clear_versions();
    gd_.clear_library();
    gd_.clear_version();
    if (gd_.ByteSizeLong() > 0) p.set(std::string(kGraphRest), Opaque{"tf.GraphDef", gd_.SerializeAsString()});
  }

  tf::GraphDef& gd_;
  const std::string& file_;
  Graph g_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::vector<Ref>> data_;
  std::vector<std::vector<std::size_t>> control_;
  std::vector<std::vector<std::string>> back_;
  std::vector<std::uint32_t> outputs_;
  std::vector<bool> read_;
  std::vector<NodeId> ids_;
};

// ---- writing ------------------------------------------------------------------------

void tensor_to_tf(const Tensor& t, tf::TensorProto& out) {
  tf::DataType dt = dtype_to_tf(t.dtype);
  if (dt == tf::DT_INVALID) throw Error(SourceLoc{}, "a GraphDef has no element type for " + std::string(dtype_name(t.dtype)));
  out.set_dtype(dt);
  auto* shape = out.mutable_tensor_shape();
  for (auto d : t.shape) shape->add_dim()->set_size(d);
  if (!t.has_data()) return;
  // One element goes into the typed field, more into tensor_content: what TensorFlow's
  // own writers do for scalars and arrays, so a file they wrote comes back byte for byte.
  if (t.num_elements() != 1) {
    out.set_tensor_content(t.data->data(), t.data->size());
    return;
  }
  const char* p = t.data->data();
  auto get = [p]<class T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.dtype) {
    case DType::Float32: out.add_float_val(get(float{})); break;
    case DType::Float64: out.add_double_val(get(double{})); break;
    case DType::Int32: out.add_int_val(get(std::int32_t{})); break;
    case DType::UInt8: out.add_int_val(get(std::uint8_t{})); break;
    case DType::Int16: out.add_int_val(get(std::int16_t{})); break;
    case DType::Int8: out.add_int_val(get(std::int8_t{})); break;
    case DType::UInt16: out.add_int_val(get(std::uint16_t{})); break;
    case DType::Int64: out.add_int64_val(get(std::int64_t{})); break;
    case DType::Bool: out.add_bool_val(get(std::uint8_t{}) != 0); break;
    case DType::Float16:
    case DType::BFloat16: out.add_half_val(get(std::uint16_t{})); break;
    case DType::UInt32: out.add_uint32_val(get(std::uint32_t{})); break;
    case DType::UInt64: out.add_uint64_val(get(std::uint64_t{})); break;
    default: break;
  }
}

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

void attr_to_tf(const std::string& name, const AttrValue& v, tf::AttrValue& out) {
  std::visit(Overloaded{
                 [&](std::int64_t i) { out.set_i(i); },
                 [&](float f) { out.set_f(f); },
                 [&](const std::string& s) { out.set_s(s); },
                 [&](bool b) { out.set_b(b); },
                 [&](const Tensor& t) { tensor_to_tf(t, *out.mutable_tensor()); },
                 [&](const std::vector<std::int64_t>& l) {
                   auto* list = out.mutable_list();
                   for (auto i : l) list->add_i(i);
                 },
                 [&](const std::vector<float>& l) {
                   auto* list = out.mutable_list();
                   for (auto f : l) list->add_f(f);
                 },
                 [&](const std::vector<std::string>& l) {
                   auto* list = out.mutable_list();
                   for (const auto& s : l) list->add_s(s);
                 },
                 [&](const std::vector<bool>& l) {
                   auto* list = out.mutable_list();
                   for (bool b : l) list->add_b(b);
                 },
                 [&](const std::vector<Tensor>& l) {
                   auto* list = out.mutable_list();
                   for (const auto& t : l) tensor_to_tf(t, *list->add_tensor());
                 },
                 [&](const Opaque& o) {
                   bool ok = false;
                   if (o.kind == kOpaqueAttr) ok = out.ParseFromString(o.bytes);
                   else if (o.kind == kOpaqueTensor) ok = out.mutable_tensor()->ParseFromString(o.bytes);
                   if (!ok)
                     throw Error(SourceLoc{}, "attribute '" + name + "' holds an opaque " + o.kind +
                                                  " value, which a GraphDef cannot hold");
                 },
             },
             v);
}

// The loop edges set aside on reading, each "POSITION INPUT", back at their positions.
void insert_back_edges(const std::vector<std::string>& back, tf::NodeDef& out) {
  for (const std::string& e : back) {
    auto space = e.find(' ');
    std::size_t at = 0;
    auto r = std::from_chars(e.data(), e.data() + (space == std::string::npos ? 0 : space), at);
    if (space == std::string::npos || r.ec != std::errc() || at > static_cast<std::size_t>(out.input_size()))
      throw Error(SourceLoc{}, "node '" + out.name() + "': " + std::string(kBackEdges) + " entry '" + e +
                                   "' is not 'POSITION INPUT' within its inputs");
    out.add_input(e.substr(space + 1));
    for (auto k = static_cast<std::size_t>(out.input_size()) - 1; k > at; --k) out.mutable_input()->SwapElements(static_cast<int>(k), static_cast<int>(k - 1));
  }
}

}  // namespace

Graph graphdef_to_graph(tf::GraphDef& gd, const std::string& file) { return Reader(gd, file).run(); }

tf::GraphDef graph_to_graphdef(const Graph& g) {
  tf::GraphDef gd;
  const Attributes& p = g.properties();
  if (const Opaque* o = p.get_if<Opaque>(kGraphRest)) gd.ParseFromString(o->bytes);
  std::vector<NodeId> order = g.nodes();
  gd.mutable_node()->Reserve(static_cast<int>(order.size()));
  for (NodeId n : order) {
    const Node& nd = g.node(n);
    tf::NodeDef& out = *gd.add_node();
    out.set_name(nd.id);
    bool input = nd.op == OpType::intern(ops::kInput);
    out.set_op(input ? std::string("Placeholder") : std::string(nd.op.name()));
    for (ValueRef v : nd.inputs) {
      const std::string& from = g.node(v.node).id;
      out.add_input(v.port == 0 ? from : from + ":" + std::to_string(v.port));
    }
    if (const auto* back = nd.attrs.get_if<std::vector<std::string>>(kBackEdges)) insert_back_edges(*back, out);
    if (const auto* control = nd.attrs.get_if<std::vector<std::string>>(kControlInputs))
      for (const std::string& c : *control)
        if (g.find(c)) out.add_input("^" + c);  // a dependency on a node a rule removed goes with it
    if (const auto* device = nd.attrs.get_if<std::string>(kDevice)) out.set_device(*device);
    bool has_dtype = false;
    for (const auto& [key, value] : nd.attrs) {
      if (key == kDevice || key == kControlInputs || key == kTfjsQuantization || key == kTfjsTopologyDtype || key == kBackEdges) continue;
      has_dtype |= key == "dtype";
      tf::AttrEntry& e = *out.add_attr();
      e.set_key(key);
      try {
        attr_to_tf(key, value, *e.mutable_value());
      } catch (const Error& err) {
        throw Error(nd.loc.file.empty() ? SourceLoc{g.source_file} : nd.loc, "node '" + nd.id + "': " + err.message());
      }
    }
    // TensorFlow requires a Const's and a Placeholder's dtype; a node a rule made (a folded
    // weight) or one from another format may not carry it.
    if (!has_dtype && (input || nd.op == OpType::intern(ops::kConst))) {
      DType t = input ? nd.outputs[0].type.dtype : DType::Undefined;
      if (const Tensor* v = nd.attrs.get_if<Tensor>("value")) t = v->dtype;
      if (dtype_to_tf(t) != tf::DT_INVALID) {
        tf::AttrEntry& e = *out.add_attr();
        e.set_key("dtype");
        e.mutable_value()->set_type(dtype_to_tf(t));
      }
    }
  }
  // An output whose node a rule removed (an Identity folded into its input) is fetched by
  // its old name: an Identity of that name gives it back.
  const auto* names = p.get_if<std::vector<std::string>>(kOutputNames);
  if (names && names->size() == g.outputs().size())
    for (std::size_t k = 0; k < names->size(); ++k) {
      const std::string& name = (*names)[k];
      if (g.find(name)) continue;
      ValueRef v = g.outputs()[k];
      const Node& from = g.node(v.node);
      tf::NodeDef& id = *gd.add_node();
      id.set_name(name);
      id.set_op("Identity");
      id.add_input(v.port == 0 ? from.id : from.id + ":" + std::to_string(v.port));
      tf::AttrEntry& e = *id.add_attr();
      e.set_key("T");
      const Opaque* t = from.attrs.get_if<Opaque>("T");
      if (!(t && t->kind == kOpaqueAttr && e.mutable_value()->ParseFromString(t->bytes)))
        e.mutable_value()->set_type(tf::DT_FLOAT);
    }
  if (const Opaque* o = p.get_if<Opaque>(kVersions)) gd.mutable_versions()->ParseFromString(o->bytes);
  if (const Opaque* o = p.get_if<Opaque>(kLibrary)) gd.set_library(o->bytes);
  if (const auto* v = p.get_if<std::int64_t>(kVersion)) gd.set_version(static_cast<std::int32_t>(*v));
  return gd;
}

}  // namespace graphfuse::tf_io
