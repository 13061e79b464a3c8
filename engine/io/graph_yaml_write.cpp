// The YAML graph writer: one node per line in topological order, keys in a fixed order,
// attributes in the graph's order, so the same graph always gives the same bytes. (JSON has
// its own writer, graph_json_write.cpp, with the same layout.)
#include <algorithm>

#include "graphfuse/io.h"
#include "text_values.h"

namespace graphfuse {

namespace {

bool plain_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
}

/// True when `s` reads back from a plain YAML scalar as the same string (not a number,
/// bool, null or special float, and nothing YAML would treat as syntax).
bool yaml_plain_ok(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == '/'))
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (plain_char(s[i])) continue;
    // "s:1" is one plain scalar; ": " or a trailing ':' would start a mapping.
    if (s[i] == ':' && i + 1 < s.size() && plain_char(s[i + 1])) continue;
    return false;
  }
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::string_view kReserved[] = {"true", "false", "null", "yes", "no", "on", "off",
                                                   "y", "n", "nan", "inf", "infinity"};
  return std::find(std::begin(kReserved), std::end(kReserved), lower) == std::end(kReserved);
}

class Writer {
 public:
  explicit Writer(const Graph& g) : g_(g), words_(textio::kYamlWords) {}

  std::string write() {
    std::vector<std::string> ins, outs;
    for (NodeId n : g_.inputs()) ins.push_back(str(g_.node(n).id));
    for (ValueRef v : g_.outputs()) outs.push_back(ref(v));
    std::vector<std::string> nodes;
    for (NodeId n : textio::write_order(g_)) nodes.push_back(textio::at_node(g_, g_.node(n), [&] { return node(n); }));
    std::string props;
    if (!g_.properties().empty()) props = attributes(g_.properties(), "graph properties");
    std::string out = "inputs: " + list(ins) + "\noutputs: " + list(outs) + "\n";
    if (!props.empty()) out += "properties: " + props + "\n";
    out += nodes.empty() ? "nodes: []\n" : "nodes:\n";
    for (const auto& n : nodes) out += "  - " + n + "\n";
    return out;
  }

 private:
  std::string str(std::string_view s) const { return yaml_plain_ok(s) ? std::string(s) : textio::quote_string(s); }

  std::string key(std::string_view k) const { return str(k) + ": "; }

  static std::string list(const std::vector<std::string>& items) {
    std::string s = "[";
    for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
    return s + "]";
  }

  std::string ref(ValueRef v) const {
    if (!v.valid()) return "null";
    return str(g_.value_name(v));
  }

  std::string tensor(const Tensor& t, const std::string& what) const {
    std::string dtype = dtype_name(t.dtype) == "undefined" && t.dtype != DType::Undefined
                            ? std::to_string(static_cast<int>(t.dtype))
                            : str(dtype_name(t.dtype));
    std::vector<std::string> dims;
    for (auto d : t.shape) dims.push_back(std::to_string(d));
    std::string s = "{" + key("tensor") + dtype + ", " + key("shape") + list(dims);
    if (t.has_data()) {
      s += ", " + key("data") + "[";
      textio::append_tensor_elements(s, t, words_, what);
      s += "]";
    }
    return s + "}";
  }

  std::string value(const AttrValue& v, const std::string& what) const {
    return textio::spell_value(
        v, [&](float x) { return textio::format_float(x, words_); }, [&](const std::string& x) { return str(x); },
        [&](const Tensor& x) { return tensor(x, what); },
        [&](const Opaque& o) {
          return "{" + key("opaque") + str(o.kind) + ", " + key("bytes") + str(textio::base64_encode(o.bytes)) + "}";
        });
  }

  std::string attributes(const Attributes& attrs, const std::string& what) const {
    std::string s = "{";
    bool first = true;
    for (const auto& [k, v] : attrs) {
      s += (first ? "" : ", ") + key(k) + value(v, what + ", attribute '" + k + "'");
      first = false;
    }
    return s + "}";
  }

  std::string type(const ValueType& t) const {
    std::vector<std::string> parts;
    if (t.dtype != DType::Undefined) {
      std::string_view name = dtype_name(t.dtype);
      parts.push_back(key("dtype") + (name == "undefined" ? std::to_string(static_cast<int>(t.dtype)) : str(name)));
    }
    if (t.shape_known) {
      std::vector<std::string> dims;
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        bool param = i < t.dim_params.size() && !t.dim_params[i].empty();
        dims.push_back(param ? str(t.dim_params[i]) : std::to_string(t.shape[i]));
      }
      parts.push_back(key("shape") + list(dims));
    }
    std::string s = "{";
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s + "}";
  }

  std::string node(NodeId n) const {
    const Node& nd = g_.node(n);
    std::string s = "{" + key("id") + str(nd.id) + ", " + key("op_type") + str(nd.op.name());
    if (!nd.inputs.empty()) {
      std::vector<std::string> ins;
      for (ValueRef v : nd.inputs) ins.push_back(ref(v));
      s += ", " + key("inputs") + list(ins);
    }
    // A name equal to the default (`id`, `id:k`) reads back as unnamed, so only other
    // names call for the list; that keeps a second write byte-identical to the first.
    bool named = false;
    for (std::uint32_t k = 0; k < nd.outputs.size(); ++k)
      named = named || (!nd.outputs[k].name.empty() &&
                        nd.outputs[k].name != (k == 0 ? nd.id : nd.id + ":" + std::to_string(k)));
    if (nd.outputs.size() > 1 || named) {
      std::vector<std::string> outs;
      for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) outs.push_back(str(g_.value_name({n, k})));
      s += ", " + key("outputs") + list(outs);
    }
    if (std::any_of(nd.outputs.begin(), nd.outputs.end(), [](const OutputInfo& o) { return !(o.type == ValueType{}); })) {
      std::vector<std::string> types;
      for (const auto& o : nd.outputs) types.push_back(type(o.type));
      s += ", " + key("types") + list(types);
    }
    if (!nd.attrs.empty()) s += ", " + key("attributes") + attributes(nd.attrs, "node '" + nd.id + "'");
    return s + "}";
  }

  const Graph& g_;
  const textio::FloatWords& words_;
};

}  // namespace

std::string write_graph_yaml(const Graph& g) { return Writer(g).write(); }

}  // namespace graphfuse
