// Compiling a rule's pattern and rewrite ASTs into a match program and a rewrite program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/parser.h"
#include "match/program.h"

namespace graphfuse::rules {

/// What a pattern name denotes, for the rewrite compiler.
struct PatternName {
  enum class Kind { Leaf, Node } kind = Kind::Leaf;
  std::uint32_t reg = 0;  ///< Leaf: value register; Node: node register
  dsl::Pos pos;           ///< where the name was first written
};

/// A compiled pattern plus the facts the loader and the rewrite compiler need.
struct CompiledPattern {
  match::MatchProgram program;
  std::map<std::string, PatternName> names;
  std::vector<OpType> root_ops;  ///< empty: any op
  int depth = 0;
};

/// Compiles a pattern (last statement = root). Throws Error at the AST position:
/// name bound twice, unreachable pattern node, cycle, unsupported construct.
CompiledPattern compile_pattern(const dsl::Program& pattern, const dsl::TextOrigin& origin);

/// Compiles a rewrite template against a compiled pattern's names. Throws Error at
/// the AST position: unknown name, `_` or the root used as an input, op alternatives.
match::RewriteProgram compile_rewrite(const dsl::Program& rewrite, const CompiledPattern& pattern,
                                      const dsl::TextOrigin& origin);

/// A literal as an attribute value (lists must be homogeneous; ints widen to floats).
AttrValue literal_to_attr(const dsl::Literal& lit, const dsl::TextOrigin& origin);

}  // namespace graphfuse::rules
