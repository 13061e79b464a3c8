// ONNX tensors, value types and attributes <-> graphfuse Tensor, ValueType and AttrValue.
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/value_checks.h"
#include "io/onnx_convert.h"
#include "io/onnx_external.h"

namespace graphfuse::onnx_io {

// Tensor bytes are stored little-endian; ONNX raw_data is little-endian too, so typed
// fields can be memcpy'd element by element only on a little-endian host.
static_assert(std::endian::native == std::endian::little, "graphfuse assumes a little-endian host");

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

bool numeric_dtype(std::int32_t t) {
  switch (static_cast<DType>(t)) {
    case DType::Float32: case DType::UInt8: case DType::Int8: case DType::UInt16:
    case DType::Int16: case DType::Int32: case DType::Int64: case DType::Bool:
    case DType::Float16: case DType::Float64: case DType::UInt32: case DType::UInt64:
    case DType::BFloat16:
      return true;
    default:
      return false;
  }
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Packs each element of a typed protobuf field into `esz` little-endian bytes. ONNX keeps
// int8/int16/float16/bool in int32_data and uint32 in uint64_data, so narrowing is needed.
template <class Field>
std::string pack(const Field& f, std::size_t esz) {
  using Src = std::remove_cvref_t<decltype(f.Get(0))>;
  std::string out(static_cast<std::size_t>(f.size()) * esz, '\0');
  if (esz == sizeof(Src)) {
    if (!out.empty()) std::memcpy(out.data(), f.data(), out.size());
    return out;
  }
  for (int i = 0; i < f.size(); ++i) {
    Src v = f.Get(i);
    std::memcpy(out.data() + static_cast<std::size_t>(i) * esz, &v, esz);
  }
  return out;
}

}  // namespace

std::string_view canonical_domain(std::string_view domain) { return domain == "ai.onnx" ? "" : domain; }

std::int64_t opset_version(const Graph& g, std::string_view domain) {
  const auto* domains = g.properties().get_if<std::vector<std::string>>(kOpsetDomains);
  const auto* versions = g.properties().get_if<std::vector<std::int64_t>>(kOpsetVersions);
  if (!domains || !versions) return -1;
  for (std::size_t i = 0; i < domains->size() && i < versions->size(); ++i)
    if (canonical_domain((*domains)[i]) == canonical_domain(domain)) return (*versions)[i];
  return -1;
}

bool tensor_supported(const onnx::TensorProto& t) { return numeric_dtype(t.data_type()) && !t.has_segment(); }

Tensor tensor_from_proto(onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                         TensorSources* sources) {
  if (t.has_segment()) throw Error(what + ": segmented tensors are not supported");
  if (!numeric_dtype(t.data_type()))
    throw Error(what + ": tensor element type " + std::to_string(t.data_type()) + " is not supported");
  Tensor out;
  out.dtype = static_cast<DType>(t.data_type());
  out.shape.assign(t.dims().begin(), t.dims().end());
  std::uint64_t count = 1;
  for (auto d : out.shape) {
    if (d < 0) throw Error(what + ": negative dimension in shape " + shape_str(out.shape));
    // The bound every reader shares (2^40 elements): count * element size must not wrap,
    // or a short buffer would pass the size check below.
    if (d != 0 && count > static_cast<std::uint64_t>(checks::kMaxTensorElements) / static_cast<std::uint64_t>(d))
      throw Error(what + ": shape " + shape_str(out.shape) + " is too large (more than 2^40 elements)");
    count *= static_cast<std::uint64_t>(d);
  }
  const std::size_t esz = dtype_size(out.dtype);
  std::string bytes;
  TensorBytes mapped;  // a view of a mapped file: external data, or raw_data left in the model file
  const std::pair<std::uint64_t, std::uint64_t>* left_in_file = nullptr;
  if (sources)
    if (auto it = sources->raw.find(&t); it != sources->raw.end()) left_in_file = &it->second;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    mapped = read_external_tensor(t, model_dir, what, sources);
  } else if (left_in_file) {
    mapped = io::MappedInput::view(sources->model, left_in_file->first, left_in_file->second);
  } else if (t.has_raw_data()) {
    bytes = std::move(*t.mutable_raw_data());  // steals the buffer: big weights are never copied
    t.clear_raw_data();
  } else {
    switch (out.dtype) {
      case DType::Float32: bytes = pack(t.float_data(), esz); break;
      case DType::Float64: bytes = pack(t.double_data(), esz); break;
      case DType::Int64: bytes = pack(t.int64_data(), esz); break;
      case DType::UInt64: case DType::UInt32: bytes = pack(t.uint64_data(), esz); break;
      default: bytes = pack(t.int32_data(), esz); break;
    }
  }
  const std::size_t have = mapped ? mapped->size() : bytes.size();
  if (have != count * esz)
    throw Error(what + ": tensor has " + std::to_string(have) + " bytes of data, shape " +
                shape_str(out.shape) + " of " + std::string(dtype_name(out.dtype)) + " needs " +
                std::to_string(count * esz));
  out.data = mapped ? io::aligned_bytes(std::move(mapped), esz) : TensorBytes::own(std::move(bytes));
  return out;
}

void tensor_to_proto(const Tensor& t, onnx::TensorProto& out, const std::string& what, bool with_data) {
  if (!numeric_dtype(static_cast<std::int32_t>(t.dtype)))
    throw Error(what + ": tensor element type " + std::string(dtype_name(t.dtype)) + " cannot be written to ONNX");
  if (!t.has_data()) throw Error(what + ": constant has no data (only a shape), ONNX needs the values");
  auto expected = static_cast<std::size_t>(t.num_elements()) * dtype_size(t.dtype);
  if (t.data->size() != expected)
    throw Error(what + ": tensor has " + std::to_string(t.data->size()) + " bytes, shape " + shape_str(t.shape) +
                " needs " + std::to_string(expected));
  out.set_data_type(static_cast<std::int32_t>(t.dtype));
  for (auto d : t.shape) out.add_dims(d);
  if (with_data) out.set_raw_data(t.data->data(), t.data->size());
}

bool value_type_from_proto(const onnx::TypeProto& tp, ValueType& out) {
  if (tp.value_case() != onnx::TypeProto::kTensorType) return false;
  const auto& tt = tp.tensor_type();
  out = ValueType{};
  // Kept as the raw ONNX number even when DType has no name for it, so it round-trips.
  out.dtype = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape()) return true;
  out.shape_known = true;
  bool any_param = false;
  std::vector<std::string> params;
  for (const auto& d : tt.shape().dim()) {
    // A negative dim_value is unknown: declared types are checked before import, but ONNX's
    // shape inference can compute one from a nonsense model (Conv output -31), and graphfuse's
    // types hold -1 for unknown and nothing below it.
    out.shape.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
    params.push_back(d.has_dim_param() ? d.dim_param() : std::string{});
    any_param = any_param || d.has_dim_param();
  }
  if (any_param) out.dim_params = std::move(params);
  return true;
}

void value_type_to_proto(const ValueType& vt, onnx::TypeProto& out) {
  auto* tt = out.mutable_tensor_type();
  tt->set_elem_type(static_cast<std::int32_t>(vt.dtype));
  if (!vt.shape_known) return;
  auto* shape = tt->mutable_shape();  // present even for rank 0: a scalar, not "unknown"
  for (std::size_t i = 0; i < vt.shape.size(); ++i) {
    auto* d = shape->add_dim();
    if (vt.shape[i] >= 0) d->set_dim_value(vt.shape[i]);
    else if (i < vt.dim_params.size() && !vt.dim_params[i].empty()) d->set_dim_param(vt.dim_params[i]);
  }
}

void subgraph_outer_names(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& t : g.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& n : g.node()) defined.insert(n.output().begin(), n.output().end());
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out.insert(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) use(in);
    for (const auto& a : n.attribute()) {
      std::unordered_set<std::string> inner;
      if (a.has_g()) subgraph_outer_names(a.g(), inner);
      for (const auto& sub : a.graphs()) subgraph_outer_names(sub, inner);
      for (const auto& name : inner) use(name);
    }
  }
  for (const auto& o : g.output()) use(o.name());
}

AttrValue attribute_from_proto(onnx::AttributeProto& a, const std::string& model_dir, const std::string& what) {
  using AP = onnx::AttributeProto;
  // Anything a plain AttrValue would lose (doc strings, function references, lists of
  // graphs, string tensors) is kept whole so export writes the same attribute back.
  auto whole = [&] { return AttrValue(Opaque{std::string(kOpaqueAttribute), a.SerializeAsString()}); };
  if (!a.doc_string().empty() || !a.ref_attr_name().empty()) return whole();
  auto type = a.type();
  if (type == AP::UNDEFINED) {  // very old files leave `type` out: infer it from the field set
    if (a.has_i()) type = AP::INT;
    else if (a.has_f()) type = AP::FLOAT;
    else if (a.has_s()) type = AP::STRING;
    else if (a.has_t()) type = AP::TENSOR;
    else if (a.has_g()) type = AP::GRAPH;
    else if (a.ints_size()) type = AP::INTS;
    else if (a.floats_size()) type = AP::FLOATS;
    else if (a.strings_size()) type = AP::STRINGS;
    else if (a.tensors_size()) type = AP::TENSORS;
    else if (a.graphs_size()) type = AP::GRAPHS;
    else throw Error(what + ": attribute has no type and no value");
  }
  switch (type) {
    case AP::INT: return static_cast<std::int64_t>(a.i());
    case AP::FLOAT: return a.f();
    case AP::STRING: return std::move(*a.mutable_s());
    case AP::INTS: return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case AP::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case AP::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case AP::TENSOR:
      if (!tensor_supported(a.t())) return whole();
      return tensor_from_proto(*a.mutable_t(), model_dir, what);
    case AP::TENSORS: {
      for (const auto& t : a.tensors())
        if (!tensor_supported(t)) return whole();
      std::vector<Tensor> out;
      for (auto& t : *a.mutable_tensors()) out.push_back(tensor_from_proto(t, model_dir, what));
      return out;
    }
    case AP::GRAPH: return Opaque{std::string(kOpaqueGraph), a.g().SerializeAsString()};
    case AP::SPARSE_TENSOR: return Opaque{std::string(kOpaqueSparse), a.sparse_tensor().SerializeAsString()};
    case AP::TYPE_PROTO: return Opaque{std::string(kOpaqueType), a.tp().SerializeAsString()};
    case AP::GRAPHS: case AP::SPARSE_TENSORS: case AP::TYPE_PROTOS: return whole();
    default: throw Error(what + ": unsupported attribute type " + std::to_string(static_cast<int>(type)));
  }
}

void attribute_to_proto(const std::string& name, const AttrValue& v, onnx::AttributeProto& out,
                        const std::string& what) {
  using AP = onnx::AttributeProto;
  const std::string where = what + ", attribute '" + name + "'";
  auto parse = [&](google::protobuf::MessageLite& m, const std::string& bytes) {
    if (!m.ParseFromString(bytes)) throw Error(where + ": opaque value does not parse as " + m.GetTypeName());
  };
  out.set_name(name);
  std::visit(Overloaded{
      [&](std::int64_t x) { out.set_type(AP::INT); out.set_i(x); },
      [&](float x) { out.set_type(AP::FLOAT); out.set_f(x); },
      [&](const std::string& x) { out.set_type(AP::STRING); out.set_s(x); },
      // ONNX has no bool attributes; the operator specs use 0/1 ints for flags.
      [&](bool x) { out.set_type(AP::INT); out.set_i(x ? 1 : 0); },
      [&](const Tensor& x) { out.set_type(AP::TENSOR); tensor_to_proto(x, *out.mutable_t(), where); },
      [&](const std::vector<std::int64_t>& x) { out.set_type(AP::INTS); out.mutable_ints()->Add(x.begin(), x.end()); },
      [&](const std::vector<float>& x) { out.set_type(AP::FLOATS); out.mutable_floats()->Add(x.begin(), x.end()); },
      [&](const std::vector<std::string>& x) {
        out.set_type(AP::STRINGS);
        for (const auto& s : x) out.add_strings(s);
      },
      [&](const std::vector<bool>& x) {
        out.set_type(AP::INTS);
        for (bool b : x) out.add_ints(b ? 1 : 0);
      },
      [&](const std::vector<Tensor>& x) {
        out.set_type(AP::TENSORS);
        for (const auto& t : x) tensor_to_proto(t, *out.add_tensors(), where);
      },
      [&](const Opaque& x) {
        if (x.kind == kOpaqueGraph) { out.set_type(AP::GRAPH); parse(*out.mutable_g(), x.bytes); }
        else if (x.kind == kOpaqueSparse) { out.set_type(AP::SPARSE_TENSOR); parse(*out.mutable_sparse_tensor(), x.bytes); }
        else if (x.kind == kOpaqueType) { out.set_type(AP::TYPE_PROTO); parse(*out.mutable_tp(), x.bytes); }
        else if (x.kind == kOpaqueAttribute) { parse(out, x.bytes); out.set_name(name); }
        else throw Error(where + ": opaque value of kind '" + x.kind + "' cannot be written to ONNX");
      },
  }, v);
}

}  // namespace graphfuse::onnx_io
