// AST of the one graphfuse text language: graph text (.graph files), patterns,
// rewrite templates and `where:` constraints all parse into these types.
#pragma once

#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace graphfuse::dsl {

/// Position inside the parsed text, 1-based. TextOrigin maps it to a file position.
struct Pos {
  int line = 0;
  int column = 0;
};

struct Literal;
/// A tensor literal: `tensor(float32, [2, 2], [1.0, 2.0, 3.0, 4.0])`; data may be
/// omitted (`tensor(float32, [64])`) for a shape-only tensor.
struct TensorLiteral {
  std::string dtype;
  std::vector<std::int64_t> shape;
  bool has_data = false;
  std::vector<double> data;
  /// The same elements exactly, when every one was written as an integer (so int64 data
  /// such as INT64_MAX survives, which a double cannot hold); empty otherwise.
  std::vector<std::int64_t> int_data;
};

/// int | float | string | bool | [list] | tensor(...)
struct Literal {
  std::variant<std::int64_t, double, std::string, bool, std::vector<Literal>, TensorLiteral> value;
  Pos pos;
};

struct Operand;
/// `node.attr`: an attribute of a bound pattern node; `node.op_type` is the matched op.
struct AttrRef {
  std::string node;
  std::string attr;
  Pos pos;
};
/// `fn(args...)`: builtins rank, dtype, shape, dim, has, const, or a native callback.
/// Operators are calls too, named by their symbol: `a + b` is fn "+" with two args, `-a`
/// is "-" with one, and likewise "*" "/" "%" "!" "&&" "||" and the comparisons
/// "==" "!=" "<" "<=" ">" ">=" "in" (see is_operator).
struct FuncCall {
  std::string fn;
  std::vector<Operand> args;
  Pos pos;
};

/// True for an operator written with a symbol (or `in`) rather than a function name.
inline bool is_operator(const std::string& fn) {
  return fn == "in" || (!fn.empty() && !(std::isalpha(static_cast<unsigned char>(fn[0])) || fn[0] == '_'));
}
/// True for the comparison operators.
inline bool is_comparison(const std::string& fn) {
  return fn == "==" || fn == "!=" || fn == "<" || fn == "<=" || fn == ">" || fn == ">=" || fn == "in";
}
/// A name by itself (a bound value or pattern node).
struct NameRef {
  std::string name;
  Pos pos;
};
/// `[a, b, ...]` holding at least one non-literal item (`[value(lo), value(hi)]`); a list
/// of literals only is a Literal.
struct OperandList {
  std::vector<Operand> items;
  Pos pos;
};
struct Operand {
  std::variant<Literal, AttrRef, NameRef, FuncCall, OperandList> value;
  Pos pos;
};

/// A constraint: `lhs op rhs` with op one of == != < <= > >= in, or a bare predicate
/// (`has(conv.group)`, `const(w)`, `my_check(conv)`) with op empty; `!` negates.
struct Constraint {
  bool negated = false;
  Operand lhs;
  std::string op;  ///< "" for a bare predicate
  Operand rhs;     ///< unused when op is ""
  Pos pos;
};

/// One item in `{...}` after a call.
struct AttrItem {
  enum class Kind {
    Spread,      ///< `...conv`: copy every attribute of matched node conv
    Assign,      ///< `key = value` (in a pattern: the attribute must equal value)
    Constraint,  ///< `key op value` with op in == != < <= > >= in (patterns only)
    Absent,      ///< `!key` : the attribute must be absent (patterns only)
  };
  Kind kind = Kind::Assign;
  std::string key;  ///< attribute name; Spread: the node name
  std::string op;   ///< Constraint: the comparison
  Operand value;    ///< Assign / Constraint: right-hand side
  Pos pos;
};

struct Call;
/// An expression: a name (`x`, `_`, `xs...`, `split:1`), a literal, or a call.
struct Expr {
  enum class Kind { Name, Literal, Call };
  Kind kind = Kind::Name;
  std::string name;        ///< Name: identifier, or "_" for the wildcard
  int port = -1;           ///< Name: `name:k` gives k; -1 when not written
  bool variadic = false;   ///< Name: written `name...`; Call: `Op(...)...` (an each, patterns only)
  bool quoted = false;     ///< Name: written in backticks (so `_` quoted is a name, not the wildcard)
  Literal literal;         ///< Literal
  std::shared_ptr<Call> call;
  Pos pos;
};

/// `ops(args) {attrs}`. ops has one entry, or several for alternatives
/// (`Relu|Relu6(x)`); "*" is any op. Domain-qualified ops keep their dots.
struct Call {
  std::vector<std::string> ops;
  std::vector<Expr> args;
  std::vector<AttrItem> attrs;
  Pos pos;
};

/// A value's type in graph text: `float32[1, 3, 224, 224]`, `float32[N, 4]` (a symbolic
/// dim), `float32[?, 4]` (an unknown one), `float32[]` (a scalar), `float32` (rank unknown).
struct TypeAnnot {
  bool present = false;
  std::string dtype;
  bool has_shape = false;
  std::vector<std::int64_t> dims;        ///< -1 where unknown or symbolic
  std::vector<std::string> dim_params;  ///< the symbol, "" where numeric or `?`
  Pos pos;
};

/// A line of a program.
struct Statement {
  enum class Kind {
    Bind,    ///< `a = expr` or `a, b = expr` (multi-output)
    Expr,    ///< `expr` or `a, b` (several roots / replacements)
    Input,   ///< graph text: `input x, y`
    Output,  ///< graph text: `output relu, split:1`
  };
  Kind kind = Kind::Expr;
  /// Bind: the targets; Input: the names. Targets may be `name:k` in graph text.
  std::vector<Expr> targets;
  /// Expr: one or more expressions; Bind: exactly one; Output: the value names.
  std::vector<Expr> values;
  /// Bind: `... as id` names the node when its id differs from its first target (graph
  /// text for ONNX nodes whose ids and output names differ); empty when not written.
  std::string node_id;
  Pos node_id_pos;
  /// Graph text: the types written after `:` (`input x: float32[1, 3]`, `c = Conv(x, w):
  /// float32[1, 8]`), parallel to `targets` (absent ones not `present`); empty when none.
  std::vector<TypeAnnot> types;
  Pos pos;
};

struct Program {
  std::vector<Statement> statements;
};

}  // namespace graphfuse::dsl
