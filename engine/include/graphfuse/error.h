// Errors with source positions: every user-facing failure names file:line:column.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

namespace graphfuse {

/// A file's name as positions hold it: interned, so that every position in one file shares
/// one copy of the name and copying a position allocates nothing (a graph keeps a position
/// per node: a copy of a long path each was ~130 bytes a node and a tenth of a JSON load).
/// Reads as a const std::string&; compares with strings. Interning takes a lock: readers
/// make one FileName per file and copy it.
class FileName {
 public:
  FileName() = default;
  FileName(std::string_view name);  // NOLINT: a file name converts, as the string it replaced
  FileName(const std::string& name) : FileName(std::string_view(name)) {}  // NOLINT
  FileName(const char* name) : FileName(std::string_view(name)) {}        // NOLINT

  const std::string& str() const { return name_ ? *name_ : empty_(); }
  operator const std::string&() const { return str(); }  // NOLINT
  bool empty() const { return !name_; }
  std::size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }

  friend bool operator==(const FileName& a, const FileName& b) { return a.name_ == b.name_; }
  friend bool operator==(const FileName& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const FileName& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const FileName& a, const char* b) { return a.str() == b; }
  friend std::string operator+(const FileName& a, std::string_view b) { return a.str() + std::string(b); }
  friend std::string operator+(std::string_view a, const FileName& b) { return std::string(a) + b.str(); }

 private:
  static const std::string& empty_();
  const std::string* name_ = nullptr;  // in the intern table (never freed); null for ""
};

std::ostream& operator<<(std::ostream& out, const FileName& f);

/// A position in a source file; line and column are 1-based, 0 means unknown.
struct SourceLoc {
  FileName file;
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
