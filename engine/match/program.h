// Compiled rules: the flat match program a pattern becomes and the rewrite program
// a template becomes. Produced by engine/rules, run by engine/match and engine/rewrite.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dsl/ast.h"
#include "graphfuse/attribute.h"
#include "graphfuse/graph.h"

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

/// Instruction set. Registers: node registers hold NodeIds, value registers hold
/// ValueRefs. Node registers are bound in increasing order on every path through the
/// program, which the injectivity check of Producer relies on.
enum class Opcode : std::uint8_t {
  CheckOp,     ///< node reg a's op is in op_sets[aux]
  CheckArity,  ///< node reg a has exactly b inputs
  LoadInput,   ///< value reg c = input b of node reg a; fails when absent
  Producer,    ///< value reg a must be output b of some node; that node -> node reg c,
               ///< distinct from node regs 0..c-1
  ValueIs,     ///< value reg a must be output c of the node in node reg b
  SameValue,   ///< value reg a == value reg b (a name used twice)
  CheckAttr,   ///< attr_checks[aux] holds
  Fork,        ///< choice point: try forks[aux] targets in order (backtracking)
  Jump,        ///< continue at pc aux
  Accept,      ///< an embedding: report it, then backtrack for more if wanted
};

struct Instr {
  Opcode op = Opcode::Accept;
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint32_t aux = 0;
  dsl::Pos pos;  ///< pattern position this step checks (for why-not explanations)
};

/// The search plan of one pattern, anchored on its root (node register 0).
struct MatchProgram {
  std::vector<Instr> code;
  std::vector<std::vector<OpType>> op_sets;  ///< sorted; referenced by CheckOp
  std::vector<AttrCheck> attr_checks;
  std::vector<std::vector<std::uint32_t>> forks;
  std::uint32_t num_node_regs = 1;
  std::uint32_t num_value_regs = 0;
  /// Per node register: the pattern name ("" when anonymous) and where it was written.
  std::vector<std::string> node_names;
  std::vector<dsl::Pos> node_pos;
  /// Per node register: how many pattern edges read the node (any port). With exact
  /// arity checks every input slot of a matched node is a pattern edge, so a legal
  /// interior node has exactly this many uses in the graph.
  std::vector<std::uint32_t> internal_uses;
  /// Value registers that hold leaves (first occurrence of each leaf name).
  std::vector<std::uint32_t> leaf_regs;
};

/// Where a rewrite takes a new node's input from.
struct RwInput {
  enum class Kind : std::uint8_t {
    Value,    ///< value register `index` of the match (a leaf)
    NodeOut,  ///< output `port` of matched node register `index`
    New,      ///< output `port` of the rewrite's new node `index`
  };
  Kind kind = Kind::Value;
  std::uint32_t index = 0;
  std::uint32_t port = 0;
};

/// One attribute step of a new node, applied in order.
struct RwAttr {
  enum class Kind : std::uint8_t {
    Spread,    ///< copy every attribute of matched node register `node`
    Literal,   ///< key = literal
    Copy,      ///< key = attribute `src_key` of matched node register `node`
    OpTypeOf,  ///< key = the op name matched by node register `node`
  };
  Kind kind = Kind::Literal;
  std::string key;
  AttrValue literal;
  std::uint32_t node = 0;
  std::string src_key;
};

/// A node the rewrite creates.
struct RwNode {
  std::string name;  ///< template name (`t = ...`) or a generated one for nested calls
  OpType op;
  std::vector<RwInput> inputs;
  std::vector<RwAttr> attrs;
  dsl::Pos pos;
};

/// The right side of a rule. The last node takes over the root; when `erase` is set
/// there is no last node and the root's uses are rewired to `erase_to` instead.
struct RewriteProgram {
  std::vector<RwNode> nodes;
  bool erase = false;
  RwInput erase_to;
  /// (node register, attribute) pairs the rewrite copies; a match whose nodes lack
  /// one is rejected before anything is mutated.
  std::vector<std::pair<std::uint32_t, std::string>> reads;
};

/// A readable listing of a program, one instruction a line (for tests, docs and
/// `graphfuse check`-style dumps): "3  producer  n1 = producer of v0 (output 0)".
std::string disassemble(const MatchProgram& p);

/// A rule's executable form.
struct CompiledRule {
  MatchProgram match;
  RewriteProgram rewrite;
};

}  // namespace graphfuse::match
