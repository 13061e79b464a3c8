// Errors with source positions: every user-facing failure names file:line:column.
#pragma once

#include <stdexcept>
#include <string>

namespace graphfuse {

/// A position in a source file; line and column are 1-based, 0 means unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  /// "file:line:column", "file" or "" depending on what is known.
  std::string str() const;
};

/// The one exception type graphfuse throws for bad input (files, rules, graphs).
/// what() is the full message "file:line:col: error: message"; the parts stay
/// available so tools can re-format or compare them.
class Error : public std::runtime_error {
 public:
  Error(SourceLoc loc, std::string message, std::string source_line = {});
  explicit Error(std::string message) : Error(SourceLoc{}, std::move(message)) {}

  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }
  /// The offending source line, when known (shown with a caret under the column).
  const std::string& source_line() const { return source_line_; }
  /// The message followed by the source line and a caret, for terminals.
  std::string pretty() const;

 private:
  SourceLoc loc_;
  std::string message_;
  std::string source_line_;
};

}  // namespace graphfuse
