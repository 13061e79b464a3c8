// The JSON graph writer: one node per line in topological order, keys in a fixed order,
// attributes in the graph's order, so the same graph always gives the same bytes (the layout
// of the YAML writer, graph_yaml_write.cpp, in JSON syntax). Everything is appended to one
// buffer per chunk of nodes (numbers through std::to_chars, names escaped in place: no
// allocation per value), chunks are written in parallel and joined in order, and an
// attribute set shared by many nodes (Attributes::identity) is spelled once per chunk.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <unordered_map>

#include "graphfuse/io.h"
#include "graph_json.h"
#include "text_values.h"

namespace graphfuse {

namespace {

using textio::kJsonWords;

/// Appends JSON for the values of one graph to a buffer.
class JsonOut {
 public:
  JsonOut(const Graph& g, std::string& out) : g_(g), out_(out) {}

  void str(std::string_view s) { textio::append_quoted(out_, s, true); }
  void key(std::string_view k) {
    str(k);
    out_ += ": ";
  }

  /// A value's name: its output name, else `id` / `id:k` (Graph::value_name without the
  /// temporary string); null for an absent input.
  void ref(ValueRef v) {
    if (!v.valid()) return out_.append("null"), void();
    const Node& nd = g_.node(v.node);
    if (v.port < nd.outputs.size() && !nd.outputs[v.port].name.empty()) return str(nd.outputs[v.port].name);
    if (v.port == 0) return str(nd.id);
    out_ += '"';
    textio::append_escaped(out_, nd.id, true);
    out_ += ':';
    textio::append_int(out_, v.port);
    out_ += '"';
  }

  void node(const Node& nd, NodeId n) {
    out_ += '{';
    key("id");
    str(nd.id);
    out_ += ", ";
    key("op_type");
    str(op_name(nd.op));
    if (!nd.inputs.empty()) {
      out_ += ", ";
      key("inputs");
      out_ += '[';
      for (std::size_t i = 0; i < nd.inputs.size(); ++i) {
        if (i) out_ += ", ";
        ref(nd.inputs[i]);
      }
      out_ += ']';
    }
    // A name equal to the default (`id`, `id:k`) reads back as unnamed, so only other
    // names call for the list; that keeps a second write byte-identical to the first.
    bool named = false;
    for (std::uint32_t k = 0; k < nd.outputs.size() && !named; ++k)
      named = !nd.outputs[k].name.empty() && !default_name(nd.outputs[k].name, nd.id, k);
    if (nd.outputs.size() > 1 || named) {
      out_ += ", ";
      key("outputs");
      out_ += '[';
      for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) {
        if (k) out_ += ", ";
        ref({n, k});
      }
      out_ += ']';
    }
    if (std::any_of(nd.outputs.begin(), nd.outputs.end(), [](const OutputInfo& o) { return !(o.type == ValueType{}); })) {
      out_ += ", ";
      key("types");
      out_ += '[';
      for (std::size_t k = 0; k < nd.outputs.size(); ++k) {
        if (k) out_ += ", ";
        type(nd.outputs[k].type);
      }
      out_ += ']';
    }
    if (!nd.attrs.empty()) {
      out_ += ", ";
      key("attributes");
      node_attributes(nd);
    }
    out_ += '}';
  }

  void attributes(const Attributes& attrs, std::string_view what) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : attrs) {
      if (!first) out_ += ", ";
      first = false;
      key(k);
      value(v, what, k);
    }
    out_ += '}';
  }

 private:
  static bool default_name(std::string_view name, std::string_view id, std::uint32_t k) {
    if (k == 0) return name == id;
    char buf[16];
    auto r = std::to_chars(buf, buf + sizeof buf, k);
    std::string_view digits(buf, static_cast<std::size_t>(r.ptr - buf));
    return name.size() == id.size() + 1 + digits.size() && name.substr(0, id.size()) == id &&
           name[id.size()] == ':' && name.substr(id.size() + 1) == digits;
  }

  /// OpType::name() takes the intern table's lock: asked once per op type here.
  std::string_view op_name(OpType op) {
    if (op.index() >= op_names_.size()) op_names_.resize(op.index() + 1);
    std::string_view& name = op_names_[op.index()];
    if (name.empty()) name = op.name();
    return name;
  }

  /// A node's attributes, spelled once per shared attribute set.
  void node_attributes(const Node& nd) {
    const void* identity = nd.attrs.identity();
    if (auto it = cache_.find(identity); it != cache_.end()) return out_.append(it->second), void();
    std::size_t start = out_.size();
    attributes(nd.attrs, "node '" + nd.id + "'");
    if (cache_.size() < kCacheMax) cache_.emplace(identity, out_.substr(start));
  }

  void type(const ValueType& t) {
    out_ += '{';
    if (t.dtype != DType::Undefined) {
      key("dtype");
      dtype(t.dtype);
    }
    if (t.shape_known) {
      if (t.dtype != DType::Undefined) out_ += ", ";
      key("shape");
      out_ += '[';
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        if (i) out_ += ", ";
        if (i < t.dim_params.size() && !t.dim_params[i].empty()) str(t.dim_params[i]);
        else textio::append_int(out_, t.shape[i]);
      }
      out_ += ']';
    }
    out_ += '}';
  }

  /// An element type by name, or by number when graphfuse has no name for it.
  void dtype(DType d) {
    std::string_view name = dtype_name(d);
    if (name == "undefined" && d != DType::Undefined) textio::append_int(out_, static_cast<int>(d));
    else str(name);
  }

  void tensor(const Tensor& t, std::string_view what, std::string_view attr) {
    out_ += '{';
    key("tensor");
    dtype(t.dtype);
    out_ += ", ";
    key("shape");
    out_ += '[';
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
      if (i) out_ += ", ";
      textio::append_int(out_, t.shape[i]);
    }
    out_ += ']';
    if (t.has_data()) {
      out_ += ", ";
      key("data");
      out_ += '[';
      textio::append_tensor_elements(out_, t, kJsonWords, std::string(what) + ", attribute '" + std::string(attr) + "'");
      out_ += ']';
    }
    out_ += '}';
  }

  template <class T>
  void one(const T& x, std::string_view what, std::string_view attr) {
    if constexpr (std::is_same_v<T, std::int64_t>) textio::append_int(out_, x);
    else if constexpr (std::is_same_v<T, float>) textio::append_float(out_, x, kJsonWords);
    else if constexpr (std::is_same_v<T, std::string>) str(x);
    else if constexpr (std::is_same_v<T, bool>) out_ += x ? "true" : "false";
    else if constexpr (std::is_same_v<T, Tensor>) tensor(x, what, attr);
    else {
      out_ += '{';
      key("opaque");
      str(x.kind);
      out_ += ", ";
      key("bytes");
      str(textio::base64_encode(x.bytes));
      out_ += '}';
    }
  }

  /// The spelling of textio::spell_value (the form .graph, YAML and JSON share), appended.
  void value(const AttrValue& v, std::string_view what, std::string_view attr) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (!textio::kIsList<T>) {
            one(x, what, attr);
          } else {
            out_ += '[';
            for (std::size_t i = 0; i < x.size(); ++i) {
              if (i) out_ += ", ";
              if constexpr (std::is_same_v<T, std::vector<bool>>) one(static_cast<bool>(x[i]), what, attr);
              else one(x[i], what, attr);
            }
            out_ += ']';
          }
        },
        v);
  }

  static constexpr std::size_t kCacheMax = 4096;  // distinct sets kept per chunk
  const Graph& g_;
  std::string& out_;
  std::unordered_map<const void*, std::string> cache_;
  std::vector<std::string_view> op_names_;  // by OpType::index(); empty until asked
};

/// Nodes order[begin, end) as they appear in the `nodes` list, each after its separator.
void write_nodes(const Graph& g, const std::vector<NodeId>& order, std::size_t begin, std::size_t end, std::string& out) {
  JsonOut w(g, out);
  for (std::size_t i = begin; i < end; ++i) {
    out += i ? ",\n    " : "\n    ";
    const Node& nd = g.node(order[i]);
    textio::at_node(g, nd, [&] { w.node(nd, order[i]); });
  }
}

}  // namespace

std::string write_graph_json(const Graph& g) {
  std::vector<std::string> pieces = textio::write_graph_json_pieces(g);
  std::string out;
  std::size_t size = 0;
  for (const auto& p : pieces) size += p.size();
  out.reserve(size);
  for (std::string& p : pieces) {
    out += p;
    std::string().swap(p);  // free as we go: the pieces and the result together are the peak
  }
  return out;
}

std::vector<std::string> textio::write_graph_json_pieces(const Graph& g) {
  std::vector<NodeId> order = textio::write_order(g);
  // Chunks of nodes are written in parallel; the first error in node order is the one
  // reported, as when writing node by node.
  constexpr std::size_t kChunk = 8192;
  std::size_t chunks = (order.size() + kChunk - 1) / kChunk;
  std::vector<std::string> parts(chunks);
  std::vector<std::exception_ptr> errors(chunks);
  auto write_chunk = [&](std::size_t c) {
    try {
      std::size_t begin = c * kChunk, end = std::min(order.size(), begin + kChunk);
      parts[c].reserve((end - begin) * 128);
      write_nodes(g, order, begin, end, parts[c]);
    } catch (...) {
      errors[c] = std::current_exception();
    }
  };
  if (chunks > 1) tbb::parallel_for(std::size_t{0}, chunks, write_chunk);
  else if (chunks == 1) write_chunk(0);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  std::string props;
  if (!g.properties().empty()) JsonOut(g, props).attributes(g.properties(), "graph properties");
  std::string head;
  head.reserve(256 + props.size() + g.inputs().size() * 16 + g.outputs().size() * 16);
  JsonOut w(g, head);
  head += "{\n  \"inputs\": [";
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    if (i) head += ", ";
    w.str(g.node(g.inputs()[i]).id);
  }
  head += "],\n  \"outputs\": [";
  for (std::size_t i = 0; i < g.outputs().size(); ++i) {
    if (i) head += ", ";
    w.ref(g.outputs()[i]);
  }
  head += "],\n";
  if (!props.empty()) head += "  \"properties\": " + props + ",\n";
  head += "  \"nodes\": [";
  parts.insert(parts.begin(), std::move(head));
  parts.emplace_back(order.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return parts;
}

}  // namespace graphfuse
