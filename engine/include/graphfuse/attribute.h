// Typed node attributes and tensors (the values a graph carries besides its edges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace graphfuse {

/// Element types; the numbering follows ONNX's TensorProto.DataType so io can cast.
enum class DType : std::int32_t {
  Undefined = 0, Float32 = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6,
  Int64 = 7, String = 8, Bool = 9, Float16 = 10, Float64 = 11, UInt32 = 12, UInt64 = 13,
  BFloat16 = 16,
};

/// "float32", "int64", ... ; "undefined" for Undefined.
std::string_view dtype_name(DType t);
/// Inverse of dtype_name; nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);
/// Bytes per element (0 for String/Undefined).
std::size_t dtype_size(DType t);

/// A dense tensor. `data` may be null when only the shape is known (a TF-style Const
/// with a `shape` attribute); the bytes are shared, never copied on graph copies.
struct Tensor {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;
  /// Raw little-endian element bytes, row-major; null when the tensor has no data.
  std::shared_ptr<const std::string> data;

  std::int64_t num_elements() const;
  bool has_data() const { return data != nullptr; }
  template <class T>
  const T* as() const { return data ? reinterpret_cast<const T*>(data->data()) : nullptr; }
  /// A float32 tensor owning a copy of `values`.
  static Tensor from_floats(std::vector<std::int64_t> shape, const std::vector<float>& values);
  /// An int64 tensor owning a copy of `values`.
  static Tensor from_ints(std::vector<std::int64_t> shape, const std::vector<std::int64_t>& values);
  /// Equal dtype, shape and bytes.
  friend bool operator==(const Tensor& a, const Tensor& b);
};

/// A value that io keeps but graphfuse does not interpret (ONNX graph attributes of
/// If/Loop/Scan, sparse tensors, type protos): the serialized bytes and a kind tag.
struct Opaque {
  std::string kind;   ///< e.g. "onnx.GraphProto"
  std::string bytes;  ///< serialized form, written back unchanged
  friend bool operator==(const Opaque&, const Opaque&) = default;
};

/// Attribute values. Floats are float32 (the precision of ONNX and TF attributes).
using AttrValue = std::variant<std::int64_t, float, std::string, bool, Tensor,
                               std::vector<std::int64_t>, std::vector<float>,
                               std::vector<std::string>, std::vector<bool>,
                               std::vector<Tensor>, Opaque>;

/// "int", "float", "string", "bool", "tensor", "ints", "floats", "strings", "bools",
/// "tensors", "opaque".
std::string_view attr_kind_name(const AttrValue& v);

class AttrInterner;

/// Ordered attribute map: keeps insertion order (so files round-trip byte for byte);
/// equality ignores order.
///
/// Copy-on-write: a copy shares the entries until either side changes, and a Graph
/// shares one copy between all nodes with identical small attribute sets (as MLIR
/// uniques attribute dictionaries), so a million Conv2D nodes with the same strides
/// and padding hold one set, not a million.
class Attributes {
 public:
  using Entry = std::pair<std::string, AttrValue>;

  const AttrValue* find(std::string_view name) const;
  /// Mutable access; unshares the entries first (the caller may write through it).
  AttrValue* find(std::string_view name);
  bool has(std::string_view name) const { return find(name) != nullptr; }
  /// Sets (replacing in place, keeping its position) or appends.
  void set(std::string name, AttrValue value);
  bool erase(std::string_view name);

  template <class T>
  const T* get_if(std::string_view name) const {
    const AttrValue* v = find(name);
    return v ? std::get_if<T>(v) : nullptr;
  }

  std::size_t size() const { return block_ ? block_->entries.size() : 0; }
  bool empty() const { return size() == 0; }
  std::vector<Entry>::const_iterator begin() const { return entries_().begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_().end(); }
  /// True when both hold the very same entries (a shared copy): cheap, for tests.
  bool shares_with(const Attributes& o) const { return block_ && block_ == o.block_; }
  /// The address of the entries, shared by copies (null when empty): equal identities
  /// mean equal sets, so writers can cache an encoding per identity. Valid while a copy
  /// lives and unchanged.
  const void* identity() const { return block_.get(); }
  /// True when these are the canonical entries a Graph's interner hands out for the set
  /// (every node with an identical set shares them).
  bool canonical() const { return block_ && block_->interned; }
  friend bool operator==(const Attributes& a, const Attributes& b);

 private:
  friend class AttrInterner;
  struct Block {
    std::vector<Entry> entries;
    bool interned = false;  // the canonical copy a Graph's interner hands out
  };
  const std::vector<Entry>& entries_() const;
  std::vector<Entry>& own_();  // unshared, writable entries
  std::shared_ptr<Block> block_;  // null when empty
};

}  // namespace graphfuse

