// Typed node attributes and tensors (the values a graph carries besides its edges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
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

/// A tensor's bytes: a read-only view kept alive by a shared owner. The owner is either a
/// std::string (bytes a reader decoded or a rewrite computed) or a mapping of the input
/// file (weights by reference: a loaded model's weights stay in the page cache, and no
/// byte is read or copied until something looks at it; docs/big-models.md). Copies share
/// the owner and never copy bytes.
///
/// It reads like the `shared_ptr<const std::string>` it replaced: `data->data()`,
/// `data->size()`, `*data` (a string_view), `if (data)`, `data = make_shared<std::string>(..)`.
class TensorBytes {
 public:
  TensorBytes() = default;
  TensorBytes(std::nullptr_t) {}
  /// Shares the string `s` (null gives no bytes).
  template <class S, class = std::enable_if_t<std::is_convertible_v<S*, const std::string*>>>
  TensorBytes(std::shared_ptr<S> s)
      : owner_(s), view_(s ? std::string_view(*s) : std::string_view{}) {
    if constexpr (!std::is_const_v<S>) string_ = s.get();
  }
  /// `view`, kept alive by `owner` (a file mapping, a buffer holding it); a null owner
  /// gives no bytes.
  TensorBytes(std::shared_ptr<const void> owner, std::string_view view)
      : owner_(std::move(owner)), view_(owner_ ? view : std::string_view{}) {}
  /// A new string holding `bytes`.
  static TensorBytes own(std::string bytes);

  const std::string_view* operator->() const { return &view_; }
  const std::string_view& operator*() const { return view_; }
  std::string_view view() const { return view_; }
  explicit operator bool() const { return owner_ != nullptr; }
  void reset() { *this = TensorBytes(); }
  /// What keeps the bytes alive: readers tag it (the file a mapping shows) so writers can
  /// tell where unchanged bytes already are.
  const std::shared_ptr<const void>& owner() const { return owner_; }
  /// True when the bytes are those of a whole, non-const string this alone holds: writing
  /// them in place is then defined and seen by no one else.
  bool unique_string() const {
    return string_ && owner_.use_count() == 1 && view_.data() == string_->data() && view_.size() == string_->size();
  }
  /// Keeps the bytes alive and points at them: a key for caches of data derived from them
  /// (packed weights), distinct for distinct views of one mapping.
  operator std::shared_ptr<const void>() const { return std::shared_ptr<const void>(owner_, view_.data()); }
  /// The same bytes in the same place (not a comparison of contents: compare *a == *b).
  friend bool operator==(const TensorBytes& a, const TensorBytes& b) {
    return a.owner_ == b.owner_ && a.view_.data() == b.view_.data() && a.view_.size() == b.view_.size();
  }
  friend bool operator==(const TensorBytes& a, std::nullptr_t) { return !a.owner_; }

 private:
  std::shared_ptr<const void> owner_;
  std::string_view view_;
  const std::string* string_ = nullptr;  // the owner, when it is a non-const string
};

/// A dense tensor. `data` may be null when only the shape is known (a TF-style Const
/// with a `shape` attribute); the bytes are shared, never copied on graph copies.
struct Tensor {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;
  /// Raw little-endian element bytes, row-major; null when the tensor has no data. May be
  /// a view of the mapped input file: read-only, whatever its owner.
  TensorBytes data;

  std::int64_t num_elements() const;
  bool has_data() const { return static_cast<bool>(data); }
  /// The bytes (empty when there are none).
  std::string_view bytes() const { return data.view(); }
  /// Writable bytes: first a private copy unless this tensor alone owns a string holding
  /// them (a view of a mapped file is never written). Null when the tensor has no data.
  char* mutable_bytes();
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

