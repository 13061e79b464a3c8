// Internal to io: what the JSON graph reader (graph_json_read.cpp, on simdjson) needs beyond
// simdjson: graphfuse's own JSON syntax errors with their positions, its string escapes, and
// the bytes simdjson refuses but graphfuse's JSON files may hold.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "yaml_values.h"

namespace graphfuse::textio {

/// Checks `text` against the JSON graphfuse reads and fails through `src` with
/// "malformed YAML/JSON: ..." at the first offending character; returns when it is well
/// formed. Beyond JSON it takes bare words (the writer's NaN, Infinity, -Infinity; any
/// unquoted token is a plain scalar, typed later by the YAML rules) and any byte but a
/// newline inside strings. The reader runs it only after a failure, so that a syntax error
/// anywhere in the file is reported before any schema error, and at the same place
/// whatever simdjson noticed first.
void check_json_syntax(std::string_view text, const YamlSource& src);
/// check_json_syntax's verdict without the message: whether `text` is well formed.
bool json_syntax_ok(std::string_view text);

/// Appends the string whose raw text (between its quotes) is `raw` to `out`, decoding
/// \" \\ \/ \b \f \n \r \t and \uXXXX (a surrogate pair is one code point; a lone surrogate
/// is encoded as it is). False on anything else after a backslash.
bool json_unescape(std::string_view raw, std::string& out);

/// simdjson refuses two things graphfuse's JSON files may hold: bytes that are not UTF-8
/// (a name from ONNX or .gfb is any bytes, and the writer writes them raw) and control
/// characters inside strings. A copy of the text that simdjson takes marks each such byte B
/// as the code point U+10FF00 + B (four bytes), and a code point already in
/// U+10FF00..U+10FFFF as its four bytes so marked; restore() gives the bytes back.
class MarkedBytes {
 public:
  /// False when `text` holds nothing to mark (the copy is then not made).
  bool mark(std::string_view text);
  const std::string& text() const { return text_; }
  /// The offset in the original text of offset `at` of the marked copy.
  std::size_t original_offset(std::size_t at) const;
  /// Appends `raw` (a token of the marked copy) with its marks turned back into bytes.
  static void restore(std::string_view raw, std::string& out);
  /// True when `raw` holds a mark.
  static bool has_mark(std::string_view raw);

 private:
  std::string text_;
  std::vector<std::size_t> marks_;  // offsets in text_ of the marks, ascending
};

}  // namespace graphfuse::textio
