// The .gfb reader: one pass, nodes added as read (the file lists producers first), every
// count and index checked against what is left so a damaged file is an Error, not a crash.
#include <bit>
#include <cstring>

#include "graph/graph_tuning.h"
#include "graph/storage.h"
#include "graph/value_checks.h"
#include "graph_binary.h"
#include "graphfuse/io.h"
#include "memory/page_warmer.h"

namespace graphfuse {

namespace {

class BinaryReader {
 public:
  BinaryReader(std::string_view buf, const std::string& file) : buf_(buf), file_(file) {}

  Graph read() {
    if (buf_.substr(0, binio::kMagic.size()) != binio::kMagic)
      fail("not a .gfb file (it does not start with \"GFB1\")");
    pos_ = binio::kMagic.size();
    if (std::uint64_t v = varint(); v != binio::kVersion)
      fail("format version " + std::to_string(v) + " is not supported (this graphfuse reads version 1)");
    Graph g;
    Attributes props = attr_set();
    std::uint64_t count = count_of("node", 3);
    if (count > checks::kMaxNodes)
      fail(std::to_string(count) + " nodes, more than the " + std::to_string(checks::kMaxNodes) + " a graph may have");
    g.reserve(count);
    PageWarmer warm(records::unfilled_records(g, count), count);  // stopped before g can go
    GraphTuning::begin_bulk(g);  // ids are filed in one ordered pass at the end (see Graph::begin_bulk)
    for (std::uint64_t i = 0; i < count; ++i) {
      node(g, i);
      warm.progress(i + 1);
    }
    try {
      GraphTuning::end_bulk(g);
    } catch (const Error& e) {
      fail(e.message());
    }
    std::vector<NodeId> ins(count_of("graph input", 1));
    std::vector<bool> input_seen(count, false);
    for (NodeId& n : ins) {
      n = node_index(count, "a graph input");
      if (std::string err = checks::graph_input_problem(g, n); !err.empty()) fail(err);
      if (input_seen[n]) fail("graph input '" + g.node(n).id + "' is listed twice");
      input_seen[n] = true;
    }
    g.set_inputs_list(std::move(ins));
    std::uint64_t outs = count_of("graph output", 2);
    for (std::uint64_t k = 0; k < outs; ++k) {
      NodeId n = node_index(count, "a graph output");
      auto port = static_cast<std::uint32_t>(varint());
      if (port >= g.node(n).outputs.size())
        fail("graph output " + std::to_string(k) + " refers to output " + std::to_string(port) + " of '" +
             g.node(n).id + "', which has " + std::to_string(g.node(n).outputs.size()) + " output(s)");
      g.add_output(ValueRef{n, port});
    }
    if (buf_.substr(pos_) != binio::kEndMagic) fail("the file does not end where the graph does (truncated?)");
    g.properties() = std::move(props);
    return g;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(SourceLoc{file_}, "malformed .gfb file: " + msg + " (at byte " + std::to_string(pos_) + ")");
  }

  // ---- primitives -------------------------------------------------------------
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= buf_.size()) fail("unexpected end of file");
      auto byte = static_cast<unsigned char>(buf_[pos_++]);
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    fail("a number is too long");
  }
  std::uint8_t byte() {
    if (pos_ >= buf_.size()) fail("unexpected end of file");
    return static_cast<std::uint8_t>(buf_[pos_++]);
  }
  std::string_view bytes(std::uint64_t n) {
    if (n > buf_.size() - pos_) fail("a length runs past the end of the file");
    std::string_view s = buf_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string string() { return std::string(bytes(varint())); }
  /// A count of items that take at least `min_bytes` each: bounded by what is left, so
  /// a damaged count cannot ask for gigabytes.
  std::uint64_t count_of(const char* what, std::uint64_t min_bytes) {
    std::uint64_t n = varint();
    if (n > (buf_.size() - pos_) / min_bytes) fail(std::string("the ") + what + " count is larger than the file");
    return n;
  }
  float float32() {
    float f;
    std::memcpy(&f, bytes(4).data(), 4);
    return f;
  }
  NodeId node_index(std::uint64_t count, const char* what) {
    std::uint64_t i = varint();
    if (i >= count) fail(std::string(what) + " refers to node " + std::to_string(i) + " of " + std::to_string(count));
    return static_cast<NodeId>(i);
  }

  // ---- attributes -------------------------------------------------------------
  std::vector<std::int64_t> dims() {
    std::vector<std::int64_t> d(count_of("dimension", 1));
    for (auto& x : d) x = binio::unzigzag(varint());
    return d;
  }
  Tensor tensor() {
    Tensor t;
    t.dtype = dtype();
    if (std::string err = checks::dtype_problem(t.dtype); !err.empty()) fail(err);
    t.shape = dims();
    // What the text readers refuse, this one must too: the JSON writer would otherwise
    // emit a negative or overflowing shape that no reader takes back.
    if (std::string err = checks::tensor_shape_problem(t.shape); !err.empty()) fail(err);
    if (byte()) {
      auto data = std::make_shared<const std::string>(bytes(varint()));
      std::size_t size = dtype_size(t.dtype);
      if (size && data->size() != static_cast<std::size_t>(t.num_elements()) * size)
        fail("tensor data has " + std::to_string(data->size()) + " bytes for " + std::to_string(t.num_elements()) +
             " elements of " + std::string(dtype_name(t.dtype)));
      t.data = std::move(data);
    }
    return t;
  }
  template <class T, class F>
  std::vector<T> list(std::uint64_t min_bytes, F item) {
    std::vector<T> v(count_of("list element", min_bytes));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = item();
    return v;
  }
  AttrValue value() {
    switch (byte()) {
      case 0: return binio::unzigzag(varint());
      case 1: return float32();
      case 2: return string();
      case 3: return byte() != 0;
      case 4: return tensor();
      case 5: return list<std::int64_t>(1, [&] { return binio::unzigzag(varint()); });
      case 6: return list<float>(4, [&] { return float32(); });
      case 7: return list<std::string>(1, [&] { return string(); });
      case 8: return list<bool>(1, [&] { return byte() != 0; });
      case 9: return list<Tensor>(4, [&] { return tensor(); });
      case 10: {
        Opaque o;
        o.kind = string();
        o.bytes = string();
        return o;
      }
      default: pos_--; fail("unknown attribute kind " + std::to_string(static_cast<unsigned>(byte())));
    }
  }
  Attributes attr_set() {
    std::uint64_t mark = varint();
    if (mark == binio::kEmptySet) return {};
    if (mark >= binio::kFirstSetRef) {
      std::uint64_t k = mark - binio::kFirstSetRef;
      if (k >= sets_.size()) fail("attribute set " + std::to_string(k) + " is used before it is defined");
      return sets_[k];  // a copy that shares the entries
    }
    Attributes a;
    std::uint64_t n = count_of("attribute", 2);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::string key = string();
      if (a.has(key)) fail("attribute '" + key + "' appears twice");
      a.set(std::move(key), value());
    }
    if (mark == binio::kNewSet) sets_.push_back(a);
    return a;
  }

  // ---- nodes ------------------------------------------------------------------
  ValueType value_type() {
    ValueType t;
    t.dtype = dtype();
    t.shape_known = byte() != 0;
    t.shape = dims();
    t.dim_params = list<std::string>(1, [&] { return string(); });
    if (std::string err = checks::value_type_problem(t); !err.empty()) fail("value type: " + err);
    return t;
  }
  DType dtype() {
    std::uint64_t v = varint();
    if (v > 0x7fffffff) fail("element type number " + std::to_string(v) + " is out of range");
    return static_cast<DType>(v);
  }
  OpType op() {
    std::uint64_t k = varint();
    if (k < ops_.size()) return ops_[k];
    if (k != ops_.size()) fail("op " + std::to_string(k) + " is used before it is named");
    std::string name = string();
    if (name.empty()) fail("an op has an empty name");
    ops_.push_back(OpType::intern(name));
    return ops_.back();
  }
  void node(Graph& g, std::uint64_t i) {
    std::string id = string();
    OpType op_type = op();
    InputList inputs(count_of("input", 1));
    for (ValueRef& v : inputs) {
      std::uint64_t d = varint();
      if (d == 0) continue;  // absent optional input
      if (d > i) fail("node '" + id + "' reads a node that comes after it");
      v = ValueRef{static_cast<NodeId>(i - d), static_cast<std::uint32_t>(varint())};
    }
    if (op_type.name() == ops::kInput && !inputs.empty()) fail("node '" + id + "': an Input node takes no inputs");
    Attributes attrs = attr_set();
    std::uint64_t outs = varint();
    if (outs == 0 || outs > 0xffff) fail("node '" + id + "' has " + std::to_string(outs) + " outputs");
    // NodeIds are file indices: the graph starts empty and nodes are only added. No
    // SourceLoc per node: the file name would cost a string a node.
    NodeId n = kNoNode;
    try {
      n = g.add_node(std::move(id), op_type, std::move(inputs), std::move(attrs), static_cast<std::uint32_t>(outs));
    } catch (const Error& e) {
      fail(e.message());  // duplicate id, port out of range: with the file and offset
    }
    if (byte()) {
      OutputInfos& infos = g.output_infos(n);
      for (std::uint64_t k = 0; k < outs; ++k) {
        infos[k].name = string();
        infos[k].type = value_type();
      }
    }
  }

  std::string_view buf_;
  std::string file_;
  std::size_t pos_ = 0;
  std::vector<OpType> ops_;
  std::vector<Attributes> sets_;
};

}  // namespace

Graph parse_graph_binary(std::string_view bytes, const std::string& file) {
  Graph g = BinaryReader(bytes, file).read();
  g.source_file = file;
  // The reader checks structure as it goes; names it takes as written, so check them here
  // (two nodes with one output name wrote a .graph file that did not load: fuzz_graph_gfb).
  try {
    g.validate_value_names();
  } catch (const Error& e) {
    throw Error(SourceLoc{file}, e.message());
  }
  return g;
}

}  // namespace graphfuse
