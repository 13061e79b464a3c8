// DSL literals as attribute values (for pattern constraints and rewrite attributes).
#include <cstring>

#include "rules/compile.h"

namespace graphfuse::rules {

namespace {

template <class T>
std::shared_ptr<const std::string> pack(const std::vector<double>& data) {
  std::string bytes(data.size() * sizeof(T), '\0');
  for (std::size_t i = 0; i < data.size(); ++i) {
    T v = static_cast<T>(data[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  return std::make_shared<const std::string>(std::move(bytes));
}

Tensor tensor_of(const dsl::TensorLiteral& t, dsl::Pos pos, const dsl::TextOrigin& o) {
  auto dt = dtype_from_name(t.dtype);
  if (!dt) throw o.error(pos, "unknown tensor element type '" + t.dtype + "'");
  Tensor out;
  out.dtype = *dt;
  out.shape = t.shape;
  if (!t.has_data) return out;
  if (static_cast<std::int64_t>(t.data.size()) != out.num_elements())
    throw o.error(pos, "tensor data has " + std::to_string(t.data.size()) + " elements, its shape needs " +
                           std::to_string(out.num_elements()));
  switch (*dt) {
    case DType::Float32: out.data = pack<float>(t.data); break;
    case DType::Float64: out.data = pack<double>(t.data); break;
    case DType::Int64:
      if (t.int_data.size() == t.data.size()) {  // exact, even beyond 2^53
        std::string bytes(t.int_data.size() * sizeof(std::int64_t), '\0');
        std::memcpy(bytes.data(), t.int_data.data(), bytes.size());
        out.data = std::make_shared<const std::string>(std::move(bytes));
      } else {
        out.data = pack<std::int64_t>(t.data);
      }
      break;
    case DType::Int32: out.data = pack<std::int32_t>(t.data); break;
    case DType::Int8: out.data = pack<std::int8_t>(t.data); break;
    case DType::UInt8: out.data = pack<std::uint8_t>(t.data); break;
    case DType::Bool: out.data = pack<std::uint8_t>(t.data); break;
    default: throw o.error(pos, "tensor literals of type " + t.dtype + " cannot carry data");
  }
  return out;
}

}  // namespace

AttrValue literal_to_attr(const dsl::Literal& lit, const dsl::TextOrigin& o) {
  if (auto* i = std::get_if<std::int64_t>(&lit.value)) return *i;
  if (auto* d = std::get_if<double>(&lit.value)) return static_cast<float>(*d);
  if (auto* s = std::get_if<std::string>(&lit.value)) return *s;
  if (auto* b = std::get_if<bool>(&lit.value)) return *b;
  if (auto* t = std::get_if<dsl::TensorLiteral>(&lit.value)) return tensor_of(*t, lit.pos, o);
  const auto& items = std::get<std::vector<dsl::Literal>>(lit.value);
  // The list's kind is decided by its elements: all ints -> ints, numbers -> floats.
  bool ints = true, nums = true, strs = true, bools = true, tensors = true;
  for (const dsl::Literal& e : items) {
    const auto& v = e.value;
    bool is_int = std::holds_alternative<std::int64_t>(v);
    ints &= is_int;
    nums &= is_int || std::holds_alternative<double>(v);
    strs &= std::holds_alternative<std::string>(v);
    bools &= std::holds_alternative<bool>(v);
    tensors &= std::holds_alternative<dsl::TensorLiteral>(v);
  }
  if (ints) {
    std::vector<std::int64_t> out;
    for (const dsl::Literal& e : items) out.push_back(std::get<std::int64_t>(e.value));
    return out;
  }
  if (nums) {
    std::vector<float> out;
    for (const dsl::Literal& e : items)
      out.push_back(std::holds_alternative<double>(e.value) ? static_cast<float>(std::get<double>(e.value))
                                                            : static_cast<float>(std::get<std::int64_t>(e.value)));
    return out;
  }
  if (strs) {
    std::vector<std::string> out;
    for (const dsl::Literal& e : items) out.push_back(std::get<std::string>(e.value));
    return out;
  }
  if (bools) {
    std::vector<bool> out;
    for (const dsl::Literal& e : items) out.push_back(std::get<bool>(e.value));
    return out;
  }
  if (tensors) {
    std::vector<Tensor> out;
    for (const dsl::Literal& e : items) out.push_back(tensor_of(std::get<dsl::TensorLiteral>(e.value), e.pos, o));
    return out;
  }
  throw o.error(lit.pos, "a list literal must hold one kind of element (numbers, strings, bools or tensors)");
}

Tensor literal_to_tensor(const dsl::Literal& lit, const dsl::TextOrigin& o) {
  AttrValue v = literal_to_attr(lit, o);
  if (auto* t = std::get_if<Tensor>(&v)) {
    if (!t->has_data()) throw o.error(lit.pos, "a constant input needs data: tensor(type, [shape], [values])");
    return *t;
  }
  if (auto* i = std::get_if<std::int64_t>(&v)) return Tensor::from_ints({}, {*i});
  if (auto* f = std::get_if<float>(&v)) return Tensor::from_floats({}, {*f});
  if (auto* is = std::get_if<std::vector<std::int64_t>>(&v))
    return Tensor::from_ints({static_cast<std::int64_t>(is->size())}, *is);
  if (auto* fs = std::get_if<std::vector<float>>(&v)) return Tensor::from_floats({static_cast<std::int64_t>(fs->size())}, *fs);
  // `true`, `false` and bool lists: bool tensors (one byte per element).
  std::vector<bool> bools;
  std::vector<std::int64_t> shape;
  if (auto* b = std::get_if<bool>(&v)) {
    bools = {*b};
  } else if (auto* bs = std::get_if<std::vector<bool>>(&v)) {
    bools = *bs;
    shape = {static_cast<std::int64_t>(bs->size())};
  } else {
    throw o.error(lit.pos, "a constant input is a number, true or false, a list of them or a tensor literal");
  }
  Tensor t;
  t.dtype = DType::Bool;
  t.shape = std::move(shape);
  std::string bytes;
  for (bool b : bools) bytes += static_cast<char>(b ? 1 : 0);
  t.data = std::make_shared<const std::string>(std::move(bytes));
  return t;
}

}  // namespace graphfuse::rules
