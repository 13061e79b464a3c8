// The .graph text reader: the DSL grammar's Program -> GraphBuilder -> Graph, with every
// error at the file position of the statement or reference that caused it.
#include <algorithm>
#include <cmath>

#include <optional>

#include "dsl/parser.h"
#include "graph_build.h"
#include "graph_in_order.h"
#include "graph_text.h"
#include "graphfuse/io.h"
#include "text_values.h"

namespace graphfuse {

namespace {

using namespace dsl;
using textio::PendingNode;
using textio::PendingRef;

/// The in-order build cannot promise GraphBuilder's result: the file is read again through
/// GraphBuilder. An exception because the DSL parser's statement loop has no way to stop.
struct GiveUp {};

class TextReader {
 public:
  /// `in_order`: straight into the graph (throws GiveUp where GraphBuilder might differ);
  /// else through GraphBuilder.
  TextReader(const std::string& file, bool in_order) {
    origin_.file = file;
    if (in_order) in_order_.emplace(file);
  }

  Graph read(std::string_view text) {
    // A statement a line, roughly (and at least 8 bytes: `a = B()` and its newline, so a
    // file of empty lines reserves little): without room the node list regrows ~20 times.
    std::size_t lines = std::min<std::size_t>(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1,
                                              text.size() / 8 + 1);
    if (in_order_) in_order_->reserve(lines);
    else builder_.reserve(lines);
    // Each statement goes to the builder as soon as its line is read and is dropped there,
    // so the builder's nodes reuse its memory (a 10^6-node file's trees took about 1 GB).
    parse_statements(text, origin_, [this](Statement& s) { statement(s); });
    if (!in_order_) return builder_.build(origin_.file);
    for (const PendingRef& r : outputs_) in_order_->add_graph_output(in_order_ref(r));
    std::optional<Graph> g = in_order_->finish();
    if (!g) throw GiveUp{};
    return std::move(*g);
  }

  /// Adds the offending source line to errors that have none (the builder's, and the
  /// reader's own: the file is not split into lines up front, a copy of the whole text).
  Error with_line(const Error& e, std::string_view text) const {
    if (!e.source_line().empty() || e.loc().file != origin_.file || e.loc().line <= 0) return e;
    std::string line = line_of(text, static_cast<std::size_t>(e.loc().line));
    return line.empty() ? e : Error(e.loc(), e.message(), line);
  }

 private:
  /// Line n (1-based) of text without its terminator; lines end as the grammar counts them
  /// ("\r\n", "\n" or a lone "\r").
  static std::string line_of(std::string_view text, std::size_t n) {
    std::size_t start = 0, line = 1;
    for (std::size_t i = 0; i < text.size() && line < n; ++i) {
      if (text[i] != '\n' && text[i] != '\r') continue;
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
      ++line;
    }
    if (line < n) return {};
    std::size_t end = text.find_first_of("\r\n", start);
    return std::string(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
  }

  void statement(const Statement& s) {
    switch (s.kind) {
      case Statement::Kind::Input:
        for (std::size_t k = 0; k < s.targets.size(); ++k)
          input(s.targets[k], k < s.types.size() ? &s.types[k] : nullptr);
        break;
      case Statement::Kind::Output:
        for (const Expr& v : s.values) {
          PendingRef r = ref(v, "an output");
          if (!in_order_) builder_.add_graph_output(std::move(r));
          else if (r.absent) throw GiveUp{};
          else outputs_.push_back(std::move(r));
        }
        break;
      case Statement::Kind::Bind: bind(s); break;
      case Statement::Kind::Expr:
        throw origin_.error(s.pos, "a graph statement needs a name: write `id = Op(...)`");
    }
  }

  [[noreturn]] void fail(Pos p, const std::string& msg) const { throw origin_.error(p, msg); }

  void plain_name(const Expr& e, const char* what) const {
    if (e.kind != Expr::Kind::Name) fail(e.pos, std::string("expected ") + what + ", a name");
    if (e.variadic) fail(e.pos, "`name...` belongs in patterns, not in graph text");
    if (e.name == "_" && !e.quoted) fail(e.pos, "`_` cannot name a node (quote it: `` `_` ``)");
  }

  // `float32[1, N, ?]` as a ValueType; no type when nothing was written.
  ValueType value_type(const TypeAnnot* t) const {
    ValueType vt;
    if (!t || !t->present) return vt;
    auto dt = dtype_from_name(t->dtype);
    if (!dt) fail(t->pos, "unknown element type '" + t->dtype + "' (float32, float16, int64, bool, ...)");
    vt.dtype = *dt;
    if (!t->has_shape) return vt;
    vt.shape_known = true;
    vt.shape = t->dims;
    for (std::int64_t d : t->dims)
      if (d < -1) fail(t->pos, "a dimension is a size >= 0, a name or ?");
    bool named = false;
    for (const std::string& p : t->dim_params) named = named || !p.empty();
    if (named) vt.dim_params = t->dim_params;
    return vt;
  }

  void input(const Expr& t, const TypeAnnot* type) {
    plain_name(t, "a graph input");
    if (t.port >= 0) fail(t.pos, "a graph input is a node: write `input " + t.name + "` without ':'");
    PendingNode n;
    n.id = t.name;
    n.op = std::string(ops::kInput);
    n.loc = origin_.map(t.pos);
    if (type && type->present) n.output_types = {value_type(type)};
    if (in_order_) {
      add_in_order(std::move(n));
      if (!in_order_->add_graph_input(t.name, origin_.map(t.pos))) throw GiveUp{};
      return;
    }
    builder_.add_node(std::move(n));
    builder_.add_graph_input(PendingRef{t.name, -1, false, origin_.map(t.pos)});
  }

  /// What a reference names, as GraphBuilder resolves it: `id:k` written apart (unquoted)
  /// is output k of node `id`; a name alone is an id, an output name, or `id:k`.
  ValueRef in_order_ref(const PendingRef& r) {
    ValueRef v;
    bool found = r.port >= 0 ? in_order_->resolve_port(r.name, static_cast<std::uint32_t>(r.port), v)
                             : in_order_->resolve(r.name, v);
    if (!found) throw GiveUp{};
    return v;
  }

  /// Node n straight into the graph: its references are to nodes above it; anything else
  /// gives up.
  void add_in_order(PendingNode n) {
    if (n.op.empty()) throw GiveUp{};
    InputList ins;
    ins.reserve(n.inputs.size());
    for (const PendingRef& r : n.inputs) ins.push_back(r.absent ? ValueRef{} : in_order_ref(r));
    if (n.op != last_op_name_) op_ = OpType::intern(n.op), last_op_name_ = n.op;
    if (!in_order_->add_node(std::move(n.id), op_, std::move(ins), std::move(n.attrs), std::move(n.loc),
                             n.output_names, n.output_types))
      throw GiveUp{};
  }

  PendingRef ref(const Expr& e, const char* what) const {
    if (e.kind == Expr::Kind::Name && e.name == "_" && !e.quoted)
      return PendingRef{"", -1, true, origin_.map(e.pos)};
    plain_name(e, what);
    return PendingRef{e.name, e.port, false, origin_.map(e.pos)};
  }

  void bind(const Statement& s) {
    const Expr& value = s.values.at(0);
    if (value.kind != Expr::Kind::Call) fail(value.pos, "expected an op call like `Relu(x)` after '='");
    const Call& call = *value.call;
    if (call.ops.size() != 1 || call.ops[0] == "*")
      fail(call.pos, "graph text needs one op type (`*` and `A|B` belong in patterns)");
    PendingNode n;
    n.op = call.ops[0];
    n.loc = origin_.map(s.pos);
    n.id = s.node_id.empty() ? s.targets[0].name : s.node_id;
    for (std::size_t k = 0; k < s.targets.size(); ++k) {
      const Expr& t = s.targets[k];
      plain_name(t, "a node name");
      bool is_default = t.name == n.id && (t.port == static_cast<int>(k) || (k == 0 && t.port < 0));
      if (!is_default && t.port >= 0)
        fail(t.pos, "output " + std::to_string(k) + " must be written `" + n.id + ":" +
                        std::to_string(k) + "` or as a plain output name");
      // One output under its default name is what no list means: no allocation for most nodes.
      if (s.targets.size() > 1 || !is_default) n.output_names.push_back(is_default ? std::string() : t.name);
    }
    if (s.types.size() > s.targets.size())
      fail(s.types[s.targets.size()].pos, "more types than outputs: " + std::to_string(s.targets.size()) + " named, " +
                                              std::to_string(s.types.size()) + " types");
    for (const TypeAnnot& t : s.types) n.output_types.push_back(value_type(&t));
    if (!n.output_types.empty()) n.output_types.resize(s.targets.size());
    n.inputs.reserve(call.args.size());
    for (std::size_t i = 0; i < call.args.size(); ++i) n.inputs.push_back(ref(call.args[i], "an input"));
    for (const AttrItem& a : call.attrs) {
      if (a.kind != AttrItem::Kind::Assign)
        fail(a.pos, "graph text attributes are `key = value` (`...`, `!key` and comparisons belong in patterns)");
      if (n.attrs.has(a.key)) fail(a.pos, "attribute '" + a.key + "' is set twice");
      n.attrs.set(a.key, attr_value(a.value));
    }
    if (n.op.empty()) fail(call.pos, "empty op type");
    if (in_order_) add_in_order(std::move(n));
    else builder_.add_node(std::move(n));
  }

  AttrValue attr_value(const Operand& o) const {
    if (const auto* f = std::get_if<FuncCall>(&o.value)) return opaque(*f);
    const auto* l = std::get_if<Literal>(&o.value);
    if (!l) fail(o.pos, "attribute values in graph text are literals (numbers, strings, true/false, lists, tensors)");
    return literal(*l);
  }

  AttrValue opaque(const FuncCall& f) const {
    auto str = [&](std::size_t i) -> const std::string* {
      if (i >= f.args.size()) return nullptr;
      const auto* l = std::get_if<Literal>(&f.args[i].value);
      return l ? std::get_if<std::string>(&l->value) : nullptr;
    };
    if (is_operator(f.fn))
      fail(f.pos, "attribute values in graph text are literals; expressions (`" + f.fn + "`) belong in rules");
    if (f.fn != "opaque" || f.args.size() != 2 || !str(0) || !str(1))
      fail(f.pos, "attribute values in graph text are literals (the only call is opaque(\"kind\", \"base64\"))");
    Opaque out{*str(0), {}};
    if (!textio::base64_decode(*str(1), out.bytes)) fail(f.args[1].pos, "malformed base64 in opaque(...)");
    return out;
  }

  float to_float(double d, Pos p) const {
    float f;
    if (!textio::to_float32(d, f)) fail(p, "float attribute out of float32 range");
    return f;
  }

  Tensor tensor(const TensorLiteral& t, Pos p) const {
    auto dtype = dtype_from_name(t.dtype);
    if (!dtype) fail(p, "unknown tensor element type '" + t.dtype + "'");
    std::vector<textio::Element> elems;
    bool exact = t.int_data.size() == t.data.size();
    for (std::size_t i = 0; i < t.data.size(); ++i)
      elems.push_back(exact ? textio::Element{true, t.int_data[i], 0} : textio::Element{false, 0, t.data[i]});
    Tensor out;
    std::string err = textio::make_tensor(*dtype, t.shape, t.has_data, elems, out);
    if (!err.empty()) fail(p, err);
    return out;
  }

  AttrValue literal(const Literal& l) const {
    if (const auto* i = std::get_if<std::int64_t>(&l.value)) return *i;
    if (const auto* d = std::get_if<double>(&l.value)) return to_float(*d, l.pos);
    if (const auto* s = std::get_if<std::string>(&l.value)) return *s;
    if (const auto* b = std::get_if<bool>(&l.value)) return *b;
    if (const auto* t = std::get_if<TensorLiteral>(&l.value)) return tensor(*t, l.pos);
    return list(std::get<std::vector<Literal>>(l.value), l.pos);
  }

  /// A list's kind is its elements' kind (textio::make_list, shared with YAML and JSON).
  AttrValue list(const std::vector<Literal>& items, Pos) const {
    std::vector<textio::ListElement> elems;
    for (const Literal& e : items)
      std::visit(
          [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, TensorLiteral>) elems.emplace_back(tensor(x, e.pos));
            else if constexpr (std::is_same_v<T, std::vector<Literal>>) fail(e.pos, "lists of lists are not attribute values");
            else elems.emplace_back(x);
          },
          e.value);
    AttrValue out;
    std::size_t bad = 0;
    std::string err = textio::make_list(std::move(elems), out, bad);
    if (!err.empty()) fail(items[bad].pos, err);
    return out;
  }

  TextOrigin origin_;
  textio::GraphBuilder builder_;
  std::optional<textio::InOrderBuilder> in_order_;
  std::vector<PendingRef> outputs_;  // the in-order build's graph outputs, added at the end
  std::string last_op_name_;         // most nodes repeat the op of the node before
  OpType op_;
};

}  // namespace

namespace textio {

Graph parse_graph_text_through_builder(std::string_view text, const std::string& file) {
  TextReader reader(file, false);
  try {
    return reader.read(text);
  } catch (const Error& e) {
    throw reader.with_line(e, text);
  }
}

}  // namespace textio

Graph parse_graph_text(std::string_view text, const std::string& file) {
  // A file in producers-first order (every file graphfuse writes) goes straight into the
  // graph: no pending nodes (192 bytes a node) and references resolved as read. Anything
  // else, and any error, is read again through GraphBuilder, whose graph and messages
  // those are.
  try {
    TextReader reader(file, true);
    return reader.read(text);
  } catch (const GiveUp&) {
  } catch (const Error&) {
  }
  return textio::parse_graph_text_through_builder(text, file);
}

}  // namespace graphfuse
