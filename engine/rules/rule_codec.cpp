// Compiled rules as bytes and back (see rule_codec.h). Each struct's fields are listed once,
// in visit(), for both directions, so a field cannot be written and not read.
#include "rules/rule_codec.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <type_traits>

#include "match/program.h"

namespace graphfuse::rules {

namespace {

// A new field in one of these structs must be added to its visit() below: the sizes are
// pinned on the one ABI they were counted on, so such a change does not build there until
// the codec knows the field (a field left out would come back from the cache as default).
#if defined(__x86_64__) && defined(__GLIBCXX__) && !defined(_GLIBCXX_DEBUG)
static_assert(sizeof(Rule) == 240);
static_assert(sizeof(RuleFileInfo) == 72);
static_assert(sizeof(match::Term) == 192);
static_assert(sizeof(match::ExprCheck) == 448);
static_assert(sizeof(match::AttrCheck) == 168);
static_assert(sizeof(match::ConstCheck) == 88);
static_assert(sizeof(match::Variadic) == 48);
static_assert(sizeof(match::Each) == 88);
static_assert(sizeof(match::Instr) == 28);
static_assert(sizeof(match::MatchProgram) == 376);
static_assert(sizeof(match::RwInput) == 12);
static_assert(sizeof(match::RwAttr) == 352);
static_assert(sizeof(match::RwNode) == 104);
static_assert(sizeof(match::RewriteProgram) == 112);
#endif

struct Malformed {};

template <class A> void visit(A& a, dsl::Pos& x) { a(x.line, x.column); }
template <class A> void visit(A& a, SourceLoc& x) { a(x.file, x.line, x.column); }
template <class A> void visit(A& a, Tensor& x);
template <class A> void visit(A& a, Opaque& x) { a(x.kind, x.bytes); }
template <class A> void visit(A& a, match::Term& x);
template <class A> void visit(A& a, match::ExprCheck& x) { a(x.mode, x.negated, x.lhs, x.cmp, x.rhs, x.loc, x.text); }
template <class A> void visit(A& a, match::AttrCheck& x) { a(x.node, x.key, x.cmp, x.literal, x.other_node, x.other_key); }
template <class A> void visit(A& a, match::ConstCheck& x) { a(x.value, x.boolean, x.has_tensor, x.tensor); }
template <class A> void visit(A& a, match::Variadic& x) { a(x.node, x.start, x.name, x.each, x.element_input); }
template <class A> void visit(A& a, match::Each& x) { a(x.node, x.start, x.ops, x.arity, x.required, x.attrs); }
template <class A> void visit(A& a, match::Instr& x) { a(x.op, x.a, x.b, x.c, x.aux, x.pos); }
template <class A> void visit(A& a, match::MatchProgram& x) {
  a(x.code, x.op_sets, x.attr_checks, x.exprs, x.consts, x.forks, x.variadics, x.eaches, x.num_node_regs,
    x.num_value_regs, x.node_names, x.node_pos, x.value_names, x.internal_uses, x.leaf_regs, x.roots,
    x.root_outputs, x.on_external_use);
}
template <class A> void visit(A& a, match::RwInput& x) { a(x.kind, x.index, x.port); }
template <class A> void visit(A& a, match::RwAttr& x) { a(x.kind, x.key, x.literal, x.node, x.src_key, x.term); }
template <class A> void visit(A& a, match::RwNode& x) {
  a(x.name, x.op, x.op_of, x.inputs, x.attrs, x.num_outputs, x.takeover, x.pos);
}
template <class A> void visit(A& a, match::RewriteProgram& x) {
  a(x.nodes, x.replacements, x.erase, x.erase_to, x.reads, x.folded);
}
template <class A> void visit(A& a, match::CompiledRule& x) { a(x.match, x.rewrite); }
template <class A> void visit(A& a, Rule& x) {
  a(x.name, x.doc, x.benefit, x.priority, x.enabled, x.loc, x.pattern, x.rewrite, x.pattern_loc, x.rewrite_loc,
    x.root_ops, x.depth, x.compiled);
}
template <class A> void visit(A& a, RuleFileInfo& x) { a(x.path, x.text, x.tests_line); }

// Fixed-size values are stored as their bytes: the cache is only ever read by the very
// binary that wrote it (rule_cache.cpp keys it by the build id).
template <class T>
constexpr bool kPlain = std::is_arithmetic_v<T> || std::is_enum_v<T>;

class Writer {
 public:
  static constexpr bool kReading = false;
  std::string out;
  std::map<std::uint32_t, std::string_view> ops;  // every OpType written, by its id

  template <class... T>
  void operator()(T&... xs) {
    (item(xs), ...);
  }

 private:
  template <class T>
  void item(T& x) {
    if constexpr (kPlain<T>) {
      out.append(reinterpret_cast<const char*>(&x), sizeof x);
    } else {
      visit(*this, x);
    }
  }
  void size(std::size_t n) {
    const auto v = static_cast<std::uint32_t>(n);
    item(v);
  }
  void item(std::string& s) {
    size(s.size());
    out.append(s);
  }
  void item(FileName& f) {
    std::string s = f.str();
    item(s);
  }
  void item(OpType& op) {
    std::uint32_t id = op.index();
    if (op.valid()) ops.emplace(id, op.name());
    item(id);
  }
  template <class T>
  void item(std::vector<T>& v) {
    size(v.size());
    for (auto&& x : v) {
      T& e = x;
      item(e);
    }
  }
  void item(std::vector<bool>& v) {
    size(v.size());
    for (bool b : v) item(b);
  }
  template <class T, class U>
  void item(std::pair<T, U>& p) {
    item(p.first);
    item(p.second);
  }
  void item(AttrValue& v) {
    const auto index = static_cast<std::uint8_t>(v.index());
    item(index);
    std::visit([this](auto& x) { item(x); }, v);
  }
  void item(std::shared_ptr<const match::CompiledRule>& c) { visit(*this, const_cast<match::CompiledRule&>(*c)); }
};

class Reader {
 public:
  static constexpr bool kReading = true;
  explicit Reader(std::string_view in) : in_(in) {}
  std::vector<OpType> ops;  // by the id the writer had: the same op in this process

  template <class... T>
  void operator()(T&... xs) {
    (item(xs), ...);
  }
  bool done() const { return in_.empty(); }
  std::size_t size() {
    std::uint32_t n = 0;
    item(n);
    if (n > in_.size()) throw Malformed{};  // every element takes at least a byte
    return static_cast<std::size_t>(n);
  }
  void item(std::string& s) {
    const std::size_t n = size();
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
  }

 private:
  template <class T>
  void item(T& x) {
    if constexpr (kPlain<T>) {
      if (in_.size() < sizeof x) throw Malformed{};
      std::memcpy(&x, in_.data(), sizeof x);
      in_.remove_prefix(sizeof x);
    } else {
      visit(*this, x);
    }
  }
  void item(FileName& f) {
    std::string s;
    item(s);
    f = FileName(s);
  }
  void item(OpType& op) {
    std::uint32_t id = 0;
    item(id);
    if (id == 0) op = OpType();
    else if (id < ops.size() && ops[id].valid()) op = ops[id];
    else throw Malformed{};
  }
  template <class T>
  void item(std::vector<T>& v) {
    v.resize(size());
    for (auto&& x : v) {
      T& e = x;
      item(e);
    }
  }
  void item(std::vector<bool>& v) {
    v.resize(size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      bool b = false;
      item(b);
      v[i] = b;
    }
  }
  template <class T, class U>
  void item(std::pair<T, U>& p) {
    item(p.first);
    item(p.second);
  }
  template <std::size_t I = 0>
  void alternative(AttrValue& v, std::size_t index) {
    if constexpr (I < std::variant_size_v<AttrValue>) {
      if (index != I) return alternative<I + 1>(v, index);
      item(v.emplace<I>());
    } else {
      throw Malformed{};
    }
  }
  void item(AttrValue& v) {
    std::uint8_t index = 0;
    item(index);
    alternative(v, index);
  }
  void item(std::shared_ptr<const match::CompiledRule>& c) {
    auto rule = std::make_shared<match::CompiledRule>();
    visit(*this, *rule);
    // Op sets are sorted by OpType number; a process that had interned other ops first
    // numbers these differently.
    for (std::vector<OpType>& ops : rule->match.op_sets) std::sort(ops.begin(), ops.end());
    for (match::Each& e : rule->match.eaches) std::sort(e.ops.begin(), e.ops.end());
    c = std::move(rule);
  }

  std::string_view in_;
};

template <class A>
void visit(A& a, Tensor& x) {
  std::uint8_t has_data = x.has_data();
  std::string bytes(x.bytes());
  a(x.dtype, x.shape, has_data, bytes);
  if constexpr (A::kReading) x.data = has_data ? TensorBytes::own(std::move(bytes)) : TensorBytes();
}

template <class A>
void visit(A& a, match::Term& x) {
  a(x.kind, x.literal, x.reg, x.port, x.of_node, x.key, x.fn, x.cmp, x.args, x.pos);
  // A native is bound by name, as the compiler bound it: to what is registered now.
  if constexpr (A::kReading) {
    if (x.kind == match::Term::Kind::Func && x.fn == match::Fn::Native && !(x.native = find_native(x.key)))
      throw Malformed{};
  }
}

}  // namespace

std::string encode_rules(const std::vector<Rule>& rules, const std::vector<RuleFileInfo>& files) {
  Writer body;
  auto& r = const_cast<std::vector<Rule>&>(rules);
  auto& f = const_cast<std::vector<RuleFileInfo>&>(files);
  body(r, f);
  // The op names first, in the order this process interned them.
  Writer head;
  std::uint32_t n = static_cast<std::uint32_t>(body.ops.size());
  head(n);
  for (auto& [id, name] : body.ops) {
    std::uint32_t i = id;
    std::string s(name);
    head(i, s);
  }
  return head.out + body.out;
}

bool decode_rules(std::string_view bytes, std::vector<Rule>& rules, std::vector<RuleFileInfo>& files) {
  try {
    Reader in(bytes);
    const std::size_t n = in.size();
    for (std::size_t k = 0; k < n; ++k) {
      std::uint32_t id = 0;
      std::string name;
      in(id, name);
      if (id == 0 || id > (1u << 24)) return false;
      if (id >= in.ops.size()) in.ops.resize(id + 1);
      in.ops[id] = OpType::intern(name);
    }
    in(rules, files);
    return in.done();
  } catch (const Malformed&) {
    return false;
  }
}

}  // namespace graphfuse::rules
