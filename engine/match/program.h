// Compiled rules: the flat match program a pattern becomes and the rewrite program
// a template becomes. Produced by engine/rules, run by engine/match and engine/rewrite.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dsl/ast.h"
#include "graphfuse/attribute.h"
#include "graphfuse/graph.h"
#include "graphfuse/rules.h"

namespace graphfuse::match {

/// Comparison of an attribute against a literal or another node's attribute.
enum class Cmp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, Has, Absent };

/// An attribute constraint. The right side is a literal, or, when `other_node` is
/// set, attribute `other_key` of another node register (cross-node constraints).
struct AttrCheck {
  std::uint32_t node = 0;
  std::string key;
  Cmp cmp = Cmp::Eq;
  AttrValue literal;
  std::int32_t other_node = -1;
  std::string other_key;
};

/// Builtin functions of constraints and rewrite values (see docs/rules.md).
enum class Fn : std::uint8_t {
  Const, Has, Absent, Rank, DType, Shape, Dim, Value, Values, Len, Compose, Range, Contains,
  Uses, AsTensor, Default, Opset, SameShape, Inverse, At, Concat, Repeat, Add, Sub, InQdqUnit, FeedsQuantize, Feeds, Producer, Native,
  // Operators (`a * b`, `-a`, `a / b`, `a % b`, `!a`, `a || b`, `a && b`, `a < b` inside
  // an expression); `+` and binary `-` are Add and Sub.
  Mul, Div, Mod, Neg, Not, Or, And, Compare,
  // `slice(x, axis, start, end)` of a constant tensor (match/eval_tensor.h).
  Slice,
  Join,
  LowerTriangular,
  MaxValue,
};

/// An expression over a match: constraints (`where:`) and computed rewrite attributes.
/// Evaluates to an attribute value, or to nothing when a fact is unknown (a shape that
/// was never inferred, a missing attribute), which fails any constraint using it.
struct Term {
  enum class Kind : std::uint8_t {
    Literal,   ///< `literal`
    Attr,      ///< attribute `key` of node register `reg`
    OpType,    ///< the op name matched by node register `reg`
    Value,     ///< a value: value register `reg`, or output `port` of node register `reg` when `of_node`
    Variadic,  ///< the variadic list `reg` (MatchProgram::variadics)
    Func,      ///< `fn(args...)`
    List,      ///< `[args...]`
  };
  Kind kind = Kind::Literal;
  AttrValue literal;
  std::uint32_t reg = 0;
  std::uint32_t port = 0;
  bool of_node = false;
  std::string key;
  Fn fn = Fn::Const;
  Cmp cmp = Cmp::Eq;  ///< Fn::Compare
  std::shared_ptr<const NativeFunction> native;  ///< Fn::Native
  std::vector<Term> args;
  dsl::Pos pos;
};

/// A compiled constraint: `lhs cmp rhs`, a bare predicate (`lhs` must be true), or a
/// definedness check (`lhs` must evaluate; the rewrite will need it).
struct ExprCheck {
  enum class Mode : std::uint8_t { Compare, Predicate, Defined } mode = Mode::Compare;
  bool negated = false;
  Term lhs;
  Cmp cmp = Cmp::Eq;
  Term rhs;
  /// Where the author wrote it and the text as written (`where:` lines, computed rewrite
  /// values), for explanations; unset for checks written inside the pattern, whose
  /// instruction position already points there.
  SourceLoc loc;
  std::string text;
};

/// A scalar constant written in a pattern (`Add(x, 1.0)`): every element of the constant
/// must be within tolerance of `value` (exact for integer tensors); with `tensor`, the
/// shape must match too and elements compare pairwise.
struct ConstCheck {
  double value = 0;
  bool boolean = false;  ///< `true` / `false`: a bool tensor whose every element is `value`
  bool has_tensor = false;
  Tensor tensor;
};

/// Relative and absolute tolerance of pattern constants: |actual - written| <=
/// kConstRtol * |written| + kConstAtol. Loose enough for `0.7071` to match 1/sqrt(2).
inline constexpr double kConstRtol = 1e-4;
inline constexpr double kConstAtol = 1e-6;

/// A variadic binding `xs...`: inputs `start`.. of node register `node`. A list named
/// inside an each (`Concat(t, Transpose(xs)...)`) holds, for every element of each
/// `each`, that element node's input `element_input` instead.
struct Variadic {
  std::uint32_t node = 0;
  std::uint32_t start = 0;
  std::string name;
  std::int32_t each = -1;  ///< index into MatchProgram::eaches; -1 for a plain list
  std::uint32_t element_input = 0;
};

/// `Op(a, _) {...}...` as a pattern node's last input (`Concat(t, Transpose(xs) {perm =
/// t.perm}...)`): every input of node register `node` from slot `start` on must be output 0
/// of its own node (an element) with an op in `ops` (empty: any op), exactly `arity` inputs,
/// the inputs in `required` present, and the attribute checks `attrs` (their `node` is
/// unused: it is the element; `other_node` names a pattern node register). Elements are
/// interior nodes of the match: distinct from each other and from the pattern nodes,
/// removed by the rewrite once unused.
struct Each {
  std::uint32_t node = 0;
  std::uint32_t start = 0;
  std::vector<OpType> ops;
  std::uint32_t arity = 0;
  std::vector<std::uint32_t> required;
  std::vector<AttrCheck> attrs;
};

/// Sentinel for Consumer's slot: any input slot.
inline constexpr std::uint32_t kAnySlot = 0xffffffffu;

/// Instruction set. Registers: node registers hold NodeIds, value registers hold
/// ValueRefs. Node registers are bound in increasing order on every path through the
/// program, which the injectivity checks of Producer and Consumer rely on.
enum class Opcode : std::uint8_t {
  CheckOp,        ///< node reg a's op is in op_sets[aux]
  CheckArity,     ///< node reg a has exactly b inputs
  CheckMinArity,  ///< node reg a has at least b inputs (variadic patterns)
  CheckOutputs,   ///< node reg a has exactly b outputs (`a, b = Split(x)`)
  LoadInput,      ///< value reg c = input b of node reg a; fails when absent
  Producer,       ///< value reg a must be output b of some node; that node -> node reg c,
                  ///< distinct from node regs 0..c-1
  ValueIs,        ///< value reg a must be output c of the node in node reg b
  SameValue,      ///< value reg a == value reg b (a name used twice)
  OutputOf,       ///< value reg c = output b of node reg a
  Consumer,       ///< node reg c = a node reading value reg a at input b (kAnySlot: any),
                  ///< distinct from node regs 0..c-1; a choice point over the consumers
  CheckConst,     ///< value reg a comes from a constant matching consts[aux]
  CheckAttr,      ///< attr_checks[aux] holds
  CheckExpr,      ///< exprs[aux] holds
  CheckEach,      ///< every element of eaches[aux] holds (placed once every node reg is bound)
  Fork,           ///< choice point: try forks[aux] targets in order (backtracking)
  Jump,           ///< continue at pc aux
  Accept,         ///< an embedding: report it, then backtrack for more if wanted
};

struct Instr {
  Opcode op = Opcode::Accept;
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint32_t aux = 0;
  dsl::Pos pos;  ///< pattern position this step checks (for why-not explanations)
};

/// What happens to interior nodes that have uses outside the match.
enum class ExternalUse : std::uint8_t {
  Reject,     ///< the default: the match is not rewritten
  Duplicate,  ///< the node stays for its other users; the rewrite still fuses a copy
};

/// The search plan of one pattern, anchored on its first root (node register 0).
struct MatchProgram {
  std::vector<Instr> code;
  std::vector<std::vector<OpType>> op_sets;  ///< sorted; referenced by CheckOp
  std::vector<AttrCheck> attr_checks;
  std::vector<ExprCheck> exprs;
  std::vector<ConstCheck> consts;
  std::vector<std::vector<std::uint32_t>> forks;
  std::vector<Variadic> variadics;
  std::vector<Each> eaches;
  std::uint32_t num_node_regs = 1;
  std::uint32_t num_value_regs = 0;
  /// Per node register: the pattern name ("" when anonymous) and where it was written.
  std::vector<std::string> node_names;
  std::vector<dsl::Pos> node_pos;
  /// Per value register: the leaf name bound there first ("" otherwise).
  std::vector<std::string> value_names;
  /// Per node register: how many pattern edges read the node (any port). With exact
  /// arity checks every input slot of a matched node is a pattern edge, so a legal
  /// interior node has exactly this many uses in the graph.
  std::vector<std::uint32_t> internal_uses;
  /// Value registers that hold leaves (first occurrence of each leaf name) and the
  /// constants written as literals.
  std::vector<std::uint32_t> leaf_regs;
  /// The roots' node registers, in the order the pattern lists them (the first is 0),
  /// and how many outputs each one's replacement provides (1, or n for `a, b = Op(..)`).
  std::vector<std::uint32_t> roots{0};
  std::vector<std::uint32_t> root_outputs{1};
  ExternalUse on_external_use = ExternalUse::Reject;
};

/// Where a rewrite takes a new node's input from.
struct RwInput {
  enum class Kind : std::uint8_t {
    Value,     ///< value register `index` of the match (a leaf)
    NodeOut,   ///< output `port` of matched node register `index`
    New,       ///< output `port` of the rewrite's new node `index`
    Variadic,  ///< every value of variadic list `index` (expands to 0 or more inputs)
    Absent,    ///< no value: an absent optional input (`_` in a rewrite call, ONNX's "")
  };
  Kind kind = Kind::Value;
  std::uint32_t index = 0;
  std::uint32_t port = 0;
  friend bool operator==(const RwInput&, const RwInput&) = default;
};

/// One attribute step of a new node, applied in order.
struct RwAttr {
  enum class Kind : std::uint8_t {
    Spread,    ///< copy every attribute of matched node register `node`
    Literal,   ///< key = literal
    Copy,      ///< key = attribute `src_key` of matched node register `node`
    OpTypeOf,  ///< key = the op name matched by node register `node`
    Computed,  ///< key = `term` evaluated on the match (value(c), [c.a, c.b], native, ...)
  };
  Kind kind = Kind::Literal;
  std::string key;
  AttrValue literal;
  std::uint32_t node = 0;
  std::string src_key;
  Term term;
};

/// A node the rewrite creates.
struct RwNode {
  std::string name;  ///< template name (`t = ...`) or a generated one for nested calls
  OpType op;
  /// `u.op_type(...)`: the node takes the op matched by pattern node register op_of (op
  /// is then unused); -1 for a node whose op is written.
  std::int32_t op_of = -1;
  std::vector<RwInput> inputs;
  std::vector<RwAttr> attrs;
  std::uint32_t num_outputs = 1;
  /// The root (index into MatchProgram::roots) this node takes over in place, keeping its
  /// NodeId, id and output names; -1 for a node created with a fresh id.
  std::int32_t takeover = -1;
  dsl::Pos pos;
};

/// The right side of a rule. `replacements` holds, per root output (roots in pattern
/// order, MatchProgram::root_outputs each), the value its uses read afterwards. A root
/// no node takes over is rewired to its replacements and removed.
struct RewriteProgram {
  std::vector<RwNode> nodes;
  std::vector<RwInput> replacements;
  /// Single-root rewrites whose replacement is an existing value (`Identity(x) => x`).
  bool erase = false;
  RwInput erase_to;
  /// (node register, attribute) pairs the rewrite copies; a match whose nodes lack
  /// one is rejected before anything is mutated.
  std::vector<std::pair<std::uint32_t, std::string>> reads;
  /// Value registers of constants whose values the rule folded in: constants written in
  /// the pattern (`Add(x, 1.0)`) and those its constraints or rewrite read with value() or
  /// values(). Their Const nodes are removed after the rewrite when nothing reads them.
  std::vector<std::uint32_t> folded;
};

/// A readable listing of a program, one instruction a line (for tests, docs and
/// `graphfuse check`-style dumps): "3  producer  n1 = producer of v0 (output 0)".
std::string disassemble(const MatchProgram& p);
/// A check in readable form: "n1(conv).group > 1", "rank(v2) == 4".
std::string describe(const MatchProgram& p, const ExprCheck& c);
/// A term in the pattern's own names, as an author would write it: "dim(w, 2)",
/// "conv.group", "2 * dim(x, 1)".
std::string author_text(const MatchProgram& p, const Term& t);

/// A rule's executable form.
struct CompiledRule {
  MatchProgram match;
  RewriteProgram rewrite;
};

}  // namespace graphfuse::match
