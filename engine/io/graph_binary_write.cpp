// The .gfb writer: nodes in the writers' order, ops and repeated attribute sets once each.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <variant>
#include <unordered_map>

#include "graph_binary.h"
#include "graphfuse/io.h"
#include "text_values.h"

namespace graphfuse {

namespace {

static_assert(std::endian::native == std::endian::little, ".gfb stores floats little-endian");

class BinaryWriter {
 public:
  explicit BinaryWriter(const Graph& g) : g_(g) {}

  std::string write() {
    std::vector<NodeId> order = textio::write_order(g_);
    std::vector<std::uint32_t> index(g_.capacity(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) index[order[i]] = static_cast<std::uint32_t>(i);
    out_.reserve(order.size() * 24 + 64);  // a typical node takes 15-25 bytes
    out_.append(binio::kMagic);
    varint(binio::kVersion);
    attr_set(g_.properties());
    varint(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      const Node& nd = g_.node(order[i]);
      string(nd.id);
      op(nd.op);
      varint(nd.inputs.size());
      for (ValueRef v : nd.inputs) {
        if (!v.valid()) {
          varint(0);
          continue;
        }
        varint(i - index[v.node]);  // producers come first, so this is >= 1
        varint(v.port);
      }
      attr_set(nd.attrs);
      varint(nd.outputs.size());
      outputs(nd.outputs);
    }
    varint(g_.inputs().size());
    for (NodeId n : g_.inputs()) varint(index[n]);
    varint(g_.outputs().size());
    for (ValueRef v : g_.outputs()) {
      varint(index[v.node]);
      varint(v.port);
    }
    out_.append(binio::kEndMagic);
    return std::move(out_);
  }

 private:
  // ---- primitives -------------------------------------------------------------
  static void varint_to(std::string& s, std::uint64_t v) {
    char buf[10];
    int n = 0;
    do {
      auto byte = static_cast<unsigned char>(v & 0x7f);
      v >>= 7;
      buf[n++] = static_cast<char>(v ? byte | 0x80 : byte);
    } while (v);
    s.append(buf, static_cast<std::size_t>(n));
  }
  void varint(std::uint64_t v) { varint_to(out_, v); }
  static void string_to(std::string& s, std::string_view x) {
    varint_to(s, x.size());
    s.append(x);
  }
  void string(std::string_view x) { string_to(out_, x); }

  void op(OpType op) {
    auto [it, fresh] = ops_.emplace(op.index(), static_cast<std::uint32_t>(ops_.size()));
    varint(it->second);
    if (fresh) string(op.name());  // first use: the name follows its new index
  }

  // ---- attributes -------------------------------------------------------------
  static void float_to(std::string& s, float f) {
    char b[4];
    std::memcpy(b, &f, 4);
    s.append(b, 4);
  }
  static void tensor_to(std::string& s, const Tensor& t) {
    varint_to(s, static_cast<std::uint64_t>(t.dtype));
    varint_to(s, t.shape.size());
    for (auto d : t.shape) varint_to(s, binio::zigzag(d));
    s.push_back(t.has_data() ? 1 : 0);
    if (t.has_data()) string_to(s, *t.data);
  }
  static void value_to(std::string& s, const AttrValue& v) {
    s.push_back(static_cast<char>(v.index()));
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::int64_t>) varint_to(s, binio::zigzag(x));
          else if constexpr (std::is_same_v<T, float>) float_to(s, x);
          else if constexpr (std::is_same_v<T, std::string>) string_to(s, x);
          else if constexpr (std::is_same_v<T, bool>) s.push_back(x ? 1 : 0);
          else if constexpr (std::is_same_v<T, Tensor>) tensor_to(s, x);
          else if constexpr (std::is_same_v<T, Opaque>) {
            string_to(s, x.kind);
            string_to(s, x.bytes);
          } else {  // the lists
            varint_to(s, x.size());
            for (const auto& e : x) {
              using E = std::decay_t<decltype(e)>;
              if constexpr (std::is_same_v<E, std::int64_t>) varint_to(s, binio::zigzag(e));
              else if constexpr (std::is_same_v<E, float>) float_to(s, e);
              else if constexpr (std::is_same_v<E, std::string>) string_to(s, e);
              else if constexpr (std::is_same_v<E, Tensor>) tensor_to(s, e);
              else s.push_back(e ? 1 : 0);  // std::vector<bool>'s proxy
            }
          }
        },
        v);
  }

  void attr_set(const Attributes& a) {
    if (a.empty()) {
      varint(binio::kEmptySet);
      return;
    }
    // Shared sets (interned by the graph) are looked up by address: no encoding, no
    // hashing of the bytes. The graph keeps them alive while we write.
    auto known = by_identity_.find(a.identity());
    if (known != by_identity_.end()) {
      varint(binio::kFirstSetRef + known->second);
      return;
    }
    scratch_.clear();
    varint_to(scratch_, a.size());
    for (const auto& [k, v] : a) {
      string_to(scratch_, k);
      value_to(scratch_, v);
    }
    // Small sets repeat (strides, padding, a Const's shape); big ones carry tensor data.
    if (scratch_.size() > kMaxSharedSet) {
      varint(binio::kOneOffSet);
      out_.append(scratch_);
      return;
    }
    auto it = sets_.find(scratch_);
    if (it != sets_.end()) {
      varint(binio::kFirstSetRef + it->second);
      remember(a, it->second);
      return;
    }
    if (sets_.size() >= kMaxSets) {
      varint(binio::kOneOffSet);
      out_.append(scratch_);
      return;
    }
    auto number = static_cast<std::uint32_t>(sets_.size());
    sets_.emplace(scratch_, number);
    remember(a, number);
    varint(binio::kNewSet);
    out_.append(scratch_);
  }
  void remember(const Attributes& a, std::uint32_t number) {
    if (by_identity_.size() < kMaxSets) by_identity_.emplace(a.identity(), number);
  }

  // ---- outputs ----------------------------------------------------------------
  void value_type(const ValueType& t) {
    varint(static_cast<std::uint64_t>(t.dtype));
    out_.push_back(t.shape_known ? 1 : 0);
    varint(t.shape.size());
    for (auto d : t.shape) varint(binio::zigzag(d));
    varint(t.dim_params.size());
    for (const auto& p : t.dim_params) string(p);
  }
  void outputs(const OutputInfos& outs) {
    if (outs.all_default() ||
        std::all_of(outs.begin(), outs.end(), [](const OutputInfo& o) { return o == OutputInfo{}; })) {
      out_.push_back(0);
      return;
    }
    out_.push_back(1);
    for (const OutputInfo& o : outs) {
      string(o.name);
      value_type(o.type);
    }
  }

  static constexpr std::size_t kMaxSharedSet = 512;  // bytes
  static constexpr std::size_t kMaxSets = 1 << 16;
  const Graph& g_;
  std::string out_;
  std::string scratch_;
  std::unordered_map<std::uint32_t, std::uint32_t> ops_;  // OpType index -> table index
  std::unordered_map<std::string, std::uint32_t> sets_;   // encoded set -> set number
  std::unordered_map<const void*, std::uint32_t> by_identity_;  // Attributes::identity() -> set number
};

}  // namespace

std::string write_graph_binary(const Graph& g) { return BinaryWriter(g).write(); }

}  // namespace graphfuse
