// The .graph text writer: `input` line, one `targets = Op(inputs) {attrs}` line per node in
// topological order, `output` line. Deterministic: the same graph gives the same bytes.
#include <algorithm>

#include "graphfuse/io.h"
#include "text_values.h"

namespace graphfuse {

namespace {

bool is_ident(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// Words the grammar reads as something other than a name where a name could stand.
bool is_keyword(std::string_view s) {
  static constexpr std::string_view kWords[] = {"_", "input", "output", "true", "false",
                                                "tensor", "inf", "nan", "as"};
  return std::find(std::begin(kWords), std::end(kWords), s) != std::end(kWords);
}

/// A node id or output name: plain when it is an identifier, else `backtick quoted`.
std::string name_text(std::string_view s) {
  if (is_ident(s) && !is_keyword(s)) return std::string(s);
  return textio::quote_string(s, false, '`');
}

/// Op names may be dotted (`com.microsoft.FusedConv`); anything else is quoted.
std::string op_text(std::string_view op) {
  bool dotted = !op.empty() && op.front() != '.' && op.back() != '.';
  for (std::size_t start = 0; dotted && start <= op.size();) {
    std::size_t dot = op.find('.', start);
    std::string_view part = op.substr(start, dot == std::string_view::npos ? op.npos : dot - start);
    dotted = is_ident(part) && (start != 0 || !is_keyword(part));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return dotted ? std::string(op) : name_text(op);
}

std::string tensor_text(const Tensor& t, const std::string& what) {
  std::string s = "tensor(" + std::string(dtype_name(t.dtype)) + ", [";
  for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  s += "]";
  if (t.has_data()) {
    s += ", [";
    textio::append_tensor_elements(s, t, textio::kGraphWords, what);
    s += "]";
  }
  return s + ")";
}

std::string value_text(const AttrValue& v, const std::string& what) {
  auto str = [](const std::string& x) { return textio::quote_string(x); };
  return textio::spell_value(
      v, [](float x) { return textio::format_float(x, textio::kGraphWords); }, str,
      [&](const Tensor& x) { return tensor_text(x, what); },
      [&](const Opaque& o) { return "opaque(" + str(o.kind) + ", " + str(textio::base64_encode(o.bytes)) + ")"; });
}

/// A value type as the reader reads it (`float32[N, 3, ?]`, `undefined` for none); the
/// type of an output that has none is written only between typed ones.
std::string type_text(const ValueType& t, const std::string& what) {
  std::string_view dtype = dtype_name(t.dtype);
  if (t.dtype != DType::Undefined && dtype == "undefined")
    throw Error(what + ": element type number " + std::to_string(static_cast<std::int64_t>(t.dtype)) +
                " has no name in .graph text (.json, .yaml, .gfb and .onnx keep it)");
  std::string s(dtype);
  if (!t.shape_known) return s;
  s += "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ", ";
    if (i < t.dim_params.size() && !t.dim_params[i].empty()) s += name_text(t.dim_params[i]);
    else if (t.shape[i] < 0) s += "?";
    else s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

bool has_type(const OutputInfo& o) { return !(o.type == ValueType{}); }

/// Whether n is declared by the `input` line: such inputs are always referred to by id
/// (the line cannot carry an output name).
bool is_declared_input(const Graph& g, NodeId n) {
  static const OpType kInput = OpType::intern(ops::kInput);
  const Node& nd = g.node(n);
  return nd.op == kInput && nd.inputs.empty() && nd.attrs.empty();
}

/// An output's name as the text gives it: empty when it is the default (`id`, `id:k`),
/// which the readers take as unnamed. Writing `s:1` as a name would quote it (`` `s:1` ``)
/// where the re-read, unnamed output is written plain: the second save would differ.
std::string_view written_name(const Node& nd, std::uint32_t k) {
  const std::string& name = nd.outputs[k].name;
  if (name.empty() || !name.starts_with(nd.id)) return name;
  std::string_view rest = std::string_view(name).substr(nd.id.size());
  if (k == 0 ? rest.empty() : rest == ":" + std::to_string(k)) return {};
  return name;
}

template <class Declared>
std::string value_ref_text(const Graph& g, ValueRef v, const Declared& declared) {
  if (!v.valid()) return "_";
  const Node& nd = g.node(v.node);
  if (std::string_view name = written_name(nd, v.port); !declared(v.node) && !name.empty()) return name_text(name);
  return name_text(nd.id) + (v.port ? ":" + std::to_string(v.port) : "");
}

/// One node as a statement: `targets = Op(inputs) {attrs} [as id]`, without a newline.
template <class Declared>
std::string node_statement(const Graph& g, NodeId n, const Declared& declared) {
  const Node& nd = g.node(n);
  std::string out;
  for (std::uint32_t k = 0; k < nd.outputs.size(); ++k) {
    if (k) out += ", ";
    std::string_view name = written_name(nd, k);
    if (!name.empty()) out += name_text(name);
    else out += name_text(nd.id) + (k ? ":" + std::to_string(k) : "");
  }
  out += " = " + op_text(nd.op.name()) + "(";
  for (std::size_t i = 0; i < nd.inputs.size(); ++i)
    out += (i ? ", " : "") + value_ref_text(g, nd.inputs[i], declared);
  out += ")";
  if (!nd.attrs.empty()) {
    out += " {";
    bool first = true;
    for (const auto& [key, value] : nd.attrs) {
      out += (first ? "" : ", ") + name_text(key) + " = " +
             value_text(value, "node '" + nd.id + "', attribute '" + key + "'");
      first = false;
    }
    out += "}";
  }
  // Types up to the last typed output (the grammar has no "no type" but `undefined`).
  std::size_t typed = nd.outputs.size();
  while (typed > 0 && !has_type(nd.outputs[typed - 1])) --typed;
  for (std::size_t k = 0; k < typed; ++k)
    out += (k ? ", " : ": ") +
           type_text(nd.outputs[k].type, "node '" + nd.id + "', output " + std::to_string(k) + " type");
  // The reader takes the first target as the id; say the id when that is not it.
  if (!written_name(nd, 0).empty() && nd.outputs[0].name != nd.id) out += " as " + name_text(nd.id);
  return out;
}

}  // namespace

std::string format_attr_value(const AttrValue& v) { return value_text(v, "attribute"); }

std::string format_node_text(const Graph& g, NodeId n) {
  auto declared = [&](NodeId m) {
    const auto& ins = g.inputs();
    return is_declared_input(g, m) && std::find(ins.begin(), ins.end(), m) != ins.end();
  };
  return node_statement(g, n, declared);
}

std::string write_graph_text(const Graph& g) {
  std::vector<bool> declared(g.capacity(), false);
  std::vector<std::string> input_names;
  for (NodeId n : g.inputs()) {
    if (!is_declared_input(g, n) || declared[n]) continue;
    declared[n] = true;
    const Node& nd = g.node(n);
    input_names.push_back(name_text(nd.id));
    if (has_type(nd.outputs[0]))
      input_names.back() += ": " + textio::at_node(g, nd, [&] {
        return type_text(nd.outputs[0].type, "graph input '" + nd.id + "' type");
      });
  }
  auto is_declared = [&](NodeId n) { return static_cast<bool>(declared[n]); };
  auto ref = [&](ValueRef v) { return value_ref_text(g, v, is_declared); };

  std::string out;
  if (!input_names.empty()) {
    out += "input ";
    for (std::size_t i = 0; i < input_names.size(); ++i) out += (i ? ", " : "") + input_names[i];
    out += "\n";
  }
  for (NodeId n : textio::write_order(g)) {
    if (declared[n]) continue;
    out += textio::at_node(g, g.node(n), [&] { return node_statement(g, n, is_declared); }) + "\n";
  }
  if (!g.outputs().empty()) {
    out += "output ";
    for (std::size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", " : "") + ref(g.outputs()[i]);
    out += "\n";
  }
  return out;
}

}  // namespace graphfuse
