// Attribute and tensor helpers.
#include "graphfuse/attribute.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace graphfuse {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, 15> kDTypes{{
    {DType::Undefined, "undefined", 0}, {DType::Float32, "float32", 4},
    {DType::UInt8, "uint8", 1},         {DType::Int8, "int8", 1},
    {DType::UInt16, "uint16", 2},       {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},         {DType::Int64, "int64", 8},
    {DType::String, "string", 0},       {DType::Bool, "bool", 1},
    {DType::Float16, "float16", 2},     {DType::Float64, "float64", 8},
    {DType::UInt32, "uint32", 4},       {DType::UInt64, "uint64", 8},
    {DType::BFloat16, "bfloat16", 2},
}};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d.name;
  return "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.type;
  return std::nullopt;
}

std::size_t dtype_size(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d.size;
  return 0;
}

std::int64_t Tensor::num_elements() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

Tensor Tensor::from_floats(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  Tensor t;
  t.dtype = DType::Float32;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()),
                                               values.size() * sizeof(float));
  return t;
}

Tensor Tensor::from_ints(std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values) {
  Tensor t;
  t.dtype = DType::Int64;
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()),
                                               values.size() * sizeof(std::int64_t));
  return t;
}

TensorBytes TensorBytes::own(std::string bytes) { return TensorBytes(std::make_shared<std::string>(std::move(bytes))); }

char* Tensor::mutable_bytes() {
  if (!data) return nullptr;
  // A string this tensor alone holds is written in place; anything else (a view of a
  // mapped file, bytes other tensors share) is copied first, so no one else sees the write.
  if (!data.unique_string()) data = TensorBytes::own(std::string(data.view()));
  return const_cast<char*>(data->data());
}

bool operator==(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.has_data() != b.has_data()) return false;
  return !a.has_data() || a.data == b.data || *a.data == *b.data;
}

std::string_view attr_kind_name(const AttrValue& v) {
  static constexpr std::array<std::string_view, 11> names{
      "int", "float", "string", "bool", "tensor", "ints", "floats", "strings", "bools",
      "tensors", "opaque"};
  return names[v.index()];
}

const std::vector<Attributes::Entry>& Attributes::entries_() const {
  static const std::vector<Entry> kNone;
  return block_ ? block_->entries : kNone;
}

std::vector<Attributes::Entry>& Attributes::own_() {
  if (!block_) {
    block_ = std::make_shared<Block>();
  } else if (block_.use_count() > 1 || block_->interned) {
    // Shared (or the interned canonical copy, which others may pick up later): write
    // to a private copy so no other node sees the change.
    block_ = std::make_shared<Block>(Block{block_->entries, false});
  }
  return block_->entries;
}

const AttrValue* Attributes::find(std::string_view name) const {
  if (!block_) return nullptr;
  for (const auto& [k, v] : block_->entries)
    if (k == name) return &v;
  return nullptr;
}

AttrValue* Attributes::find(std::string_view name) {
  if (!std::as_const(*this).find(name)) return nullptr;  // no copy for a miss
  for (auto& [k, v] : own_())
    if (k == name) return &v;
  return nullptr;
}

void Attributes::set(std::string name, AttrValue value) {
  if (AttrValue* v = find(name)) {
    *v = std::move(value);
    return;
  }
  own_().emplace_back(std::move(name), std::move(value));
}

bool Attributes::erase(std::string_view name) {
  if (!std::as_const(*this).find(name)) return false;
  auto& entries = own_();
  entries.erase(std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.first == name; }));
  if (entries.empty()) block_.reset();
  return true;
}

bool operator==(const Attributes& a, const Attributes& b) {
  if (a.size() != b.size()) return false;
  if (a.block_ == b.block_) return true;
  for (const auto& [k, v] : a) {
    const AttrValue* o = b.find(k);
    if (!o || !(*o == v)) return false;
  }
  return true;
}

}  // namespace graphfuse
