// The pattern compiler's internals, shared by its front half (names, shape, schema) and
// its back half (emitting the match program).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rules/compile.h"

namespace graphfuse::rules {

/// One pattern node: a call in the pattern text, named or nested.
struct PNode {
  const dsl::Call* call = nullptr;
  std::vector<std::string> names;  ///< binding targets (`a, b = Split(x)`); empty when nested
  dsl::Pos pos;
  std::vector<int> child;  ///< per argument: the child pattern node of a nested call, or -1
  bool multi = false;      ///< bound to several targets: its output count is checked
  std::string label() const { return names.empty() ? std::string(call->ops[0]) : names[0]; }
};

/// An argument after name resolution.
struct Arg {
  enum class Kind { Wildcard, Leaf, Node, Literal, Variadic, Each } kind = Kind::Wildcard;
  std::string leaf;  ///< Leaf and Variadic names ("" for `_...`)
  /// Each (`Transpose(xs) {perm = t.perm}...`): the element call; per element input the
  /// variadic list it binds ("" for `_`).
  const dsl::Call* each = nullptr;
  std::vector<std::string> each_lists;
  int node = -1;
  std::uint32_t port = 0;
  match::ConstCheck constant;
  dsl::Pos pos;
};

/// A constraint waiting for its registers to be bound.
struct PendingCheck {
  match::ExprCheck check;
  std::vector<std::uint32_t> nodes, values;
  dsl::Pos pos;
  bool after_each = false;  ///< reads a list inside an each: placed after the CheckEach steps
};

class PatternCompiler {
 public:
  PatternCompiler(const dsl::TextOrigin& o, const std::vector<WhereItem>& where, const OpSchemas* ops)
      : o_(o), where_(where), ops_(ops) {}

  CompiledPattern run(const dsl::Program& prog);

 private:
  [[noreturn]] void fail(dsl::Pos p, const std::string& msg) const { throw o_.error(p, msg); }
  std::string at(dsl::Pos p) const;

  // Front half (compile_pattern.cpp).
  int add_node(const dsl::Call& call, std::vector<std::string> names, dsl::Pos pos);
  void collect(const dsl::Program& prog);
  void collect_roots(const dsl::Statement& st);
  void resolve();
  Arg resolve_arg(const dsl::Expr& e, int child, bool last);
  void resolve_each(const dsl::Expr& e, Arg& a);
  bool ends_variadic(int n) const;
  void check_shape();
  void check_roots(const std::vector<int>& state);
  void check_schema() const;
  void check_call_schema(const dsl::Call& c, int fixed, bool variadic, const PNode* pn) const;
  const OpSchema* schema(const std::string& op) const;
  bool commutative(int n) const;

  // Back half (pattern_emit.cpp).
  void emit(bool with_checks);
  void bind_node(int n);
  void node_checks(int n, std::uint32_t reg);
  void process_args(int n);
  void process_arg(int n, std::size_t k, std::uint32_t v);
  void connect_root(int n);
  void emit_eaches();
  match::AttrCheck each_attr_check(const dsl::AttrItem& it) const;
  void add_pending(match::ExprCheck c, dsl::Pos pos);
  void flush();
  void emit_op(match::Opcode op, std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t aux, dsl::Pos pos);
  std::uint32_t new_value(const std::string& name);
  std::vector<OpType> op_set(const dsl::Call& call) const;

  const dsl::TextOrigin& o_;
  const std::vector<WhereItem>& where_;
  const OpSchemas* ops_;

  std::vector<PNode> nodes_;
  std::vector<std::vector<Arg>> args_;
  std::map<std::string, std::pair<int, std::uint32_t>> bound_;  ///< name -> (node, port)
  std::vector<int> roots_;
  std::vector<std::uint32_t> root_outputs_;
  std::vector<int> height_;
  bool leaf_checks_ = false;  ///< some check reads a leaf's value: the depth grows by one

  // Emission state, reset by emit().
  CompiledPattern out_;
  std::vector<int> reg_;
  std::map<std::string, std::uint32_t> leaf_reg_;
  std::vector<char> node_bound_, value_bound_;
  std::vector<PendingCheck> pending_;
  std::vector<int> queue_;
  std::vector<std::pair<int, std::size_t>> each_args_;  ///< (node, argument) of each Each, in emission order
  bool eaches_done_ = false;
  bool with_checks_ = false;
  CompiledPattern first_;           ///< the first pass's result: names for constraints
};

}  // namespace graphfuse::rules
