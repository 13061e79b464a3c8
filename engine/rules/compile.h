// Compiling a rule's pattern and rewrite ASTs into a match program and a rewrite program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/parser.h"
#include "match/program.h"

namespace graphfuse::rules {

/// One op's declared properties, from a rule file's `ops:` section.
struct OpSchema {
  bool commutative = false;
  int min_inputs = -1;  ///< -1: not declared
  int max_inputs = -1;  ///< -1: unbounded (or not declared)
  int outputs = -1;     ///< -1: not declared
  /// Attribute kinds ("int", "float", "string", "bool", "ints", "floats", "strings",
  /// "tensor", ...: attr_kind_name's words) by attribute name.
  std::map<std::string, std::string> attrs;
  /// `attrs:` was written: an attribute it does not list is a typo (`graphfuse check` error).
  bool attrs_declared = false;
  SourceLoc loc;  ///< where the op was declared
};
using OpSchemas = std::map<std::string, OpSchema, std::less<>>;

/// What a pattern name denotes, for constraints and the rewrite compiler.
struct PatternName {
  enum class Kind { Leaf, Node, Variadic } kind = Kind::Leaf;
  std::uint32_t reg = 0;   ///< Leaf: value register; Node: node register; Variadic: list index
  std::uint32_t port = 0;  ///< Node: the output the name stands for (`a, b = Split(x)`)
  dsl::Pos pos;            ///< where the name was first written
  std::vector<std::string> ops;  ///< Node: the ops it may match ("*": any)
};

/// One `where:` constraint with the origin of its text.
struct WhereItem {
  dsl::Constraint constraint;
  dsl::TextOrigin origin;
  std::string text;  ///< the constraint as written (for explanations)
};

/// A compiled pattern plus the facts the loader and the rewrite compiler need.
struct CompiledPattern {
  match::MatchProgram program;
  std::map<std::string, PatternName> names;
  std::vector<OpType> root_ops;  ///< the first root's ops; empty: any op
  int depth = 0;
  int leaf_depth = 0;  ///< the depth once some check reads a leaf (the root's height + 1)
};

/// Compiles a pattern (last statement = the root, or several roots `c1, c2`) with its
/// `where:` constraints. Throws Error at the AST position: name bound twice,
/// unreachable pattern node, cycle, ops used against their schema, unknown functions.
CompiledPattern compile_pattern(const dsl::Program& pattern, const dsl::TextOrigin& origin,
                                const std::vector<WhereItem>& where = {},
                                const OpSchemas* ops = nullptr);

/// Compiles a rewrite template against a compiled pattern's names. Computed attributes
/// that may be unavailable (`value(c)`, native functions) add checks to the pattern's
/// program, so a match is only reported when its rewrite can be built. Throws Error at
/// the AST position: unknown name, `_` or a root used as an input, op alternatives,
/// a replacement count that does not fit the roots.
match::RewriteProgram compile_rewrite(const dsl::Program& rewrite, CompiledPattern& pattern,
                                      const dsl::TextOrigin& origin, const OpSchemas* ops = nullptr);

/// A literal as an attribute value (lists must be homogeneous; ints widen to floats).
AttrValue literal_to_attr(const dsl::Literal& lit, const dsl::TextOrigin& origin);

/// A literal as a constant tensor for a rewrite's `Const` node: numbers become scalars
/// (int64 or float32), number lists 1-D tensors, tensor literals themselves.
Tensor literal_to_tensor(const dsl::Literal& lit, const dsl::TextOrigin& origin);

/// Compiles constraint and rewrite-value operands against pattern names.
class TermCompiler {
 public:
  TermCompiler(const std::map<std::string, PatternName>& names, const dsl::TextOrigin& origin,
               const OpSchemas* ops = nullptr)
      : names_(names), o_(origin), ops_(ops) {}

  /// Throws at `pos` when every op pattern node `n` may match declares its `attrs:` and
  /// none of them lists `key` (a typo: `conv.strdes`), with a did-you-mean.
  void check_attr_declared(const PatternName& n, const std::string& key, dsl::Pos pos) const;

  /// An operand as a Term; names must be arguments of functions.
  match::Term term(const dsl::Operand& op) const;
  /// A `where:` constraint or an inline attribute constraint.
  match::ExprCheck check(const dsl::Constraint& c) const;

 private:
  [[noreturn]] void fail(dsl::Pos p, const std::string& msg) const { throw o_.error(p, msg); }
  match::Term name_arg(const dsl::Operand& op) const;
  match::Term call(const dsl::FuncCall& f, dsl::Pos pos) const;
  match::Term op(const dsl::FuncCall& f, dsl::Pos pos) const;  ///< `a + b`, `!a`, `a < b`, ...
  void in_needs_list(const match::Term& rhs, dsl::Pos pos) const;

  const std::map<std::string, PatternName>& names_;
  const dsl::TextOrigin& o_;
  const OpSchemas* ops_;
};

/// "==" -> Cmp::Eq, ..., "in" -> Cmp::In.
match::Cmp cmp_of(const std::string& op);

/// The registers a term reads (for placing checks where everything is bound).
void term_registers(const match::Term& t, const match::MatchProgram& p, std::vector<std::uint32_t>& nodes,
                    std::vector<std::uint32_t>& values);

/// Whether a term reads a list bound inside an each (`xs` in `Transpose(xs)...`).
bool reads_each_list(const match::Term& t, const match::MatchProgram& p);

}  // namespace graphfuse::rules
