// Entry points of the Spirit X3 grammar, with positions mapped back to files.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ast.h"
#include "graphfuse/error.h"

namespace graphfuse::dsl {

/// Where a piece of text sits in a file, so parse errors (and later errors about
/// AST nodes) name the file's line and column even when the text is a YAML scalar.
struct TextOrigin {
  std::string file;
  int first_line = 1;    ///< file line of the text's first line
  int first_column = 1;  ///< file column of the text's first character
  int indent_column = 1; ///< file column where lines after the first start (block scalars)
  /// The whole file's lines, for showing the offending line; may be null.
  std::shared_ptr<const std::vector<std::string>> file_lines;

  SourceLoc map(Pos p) const;
  /// The file line at p, or "" when unknown.
  std::string line_at(Pos p) const;
  /// An Error at p: "file:line:col: error: message" with the source line attached.
  Error error(Pos p, const std::string& message) const;
};

/// Parses graph text, a pattern or a rewrite template (all one grammar). Throws Error
/// with the mapped position and what was expected.
Program parse_program(std::string_view text, const TextOrigin& origin);

/// Parses graph text statement by statement: `take` gets each one as soon as its line has
/// been read (and may throw), so the whole file's syntax tree never exists at once (at
/// 10^6 nodes it took about 1 GB and a third of the load in allocation). The same grammar,
/// and the same errors, as parse_program; a statement's own problems come before syntax
/// errors on later lines.
void parse_statements(std::string_view text, const TextOrigin& origin,
                      const std::function<void(Statement&)>& take);

/// Parses one `where:` constraint.
Constraint parse_constraint(std::string_view text, const TextOrigin& origin);

/// Splits a file into lines (no line terminators), for TextOrigin::file_lines.
std::shared_ptr<const std::vector<std::string>> split_lines(std::string_view text);

}  // namespace graphfuse::dsl
