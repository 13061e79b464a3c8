// TextOrigin: maps positions inside a piece of text (a file, or a YAML scalar in a file)
// back to file:line:column, and splits files into lines for error display.
#include "parser.h"

namespace graphfuse::dsl {

SourceLoc TextOrigin::map(Pos p) const {
  SourceLoc loc;
  loc.file = file;
  if (p.line <= 0) return loc;
  loc.line = first_line + (p.line - 1);
  loc.column = (p.line == 1 ? first_column : indent_column) + p.column - 1;
  return loc;
}

std::string TextOrigin::line_at(Pos p) const {
  if (!file_lines || p.line <= 0) return {};
  auto line = static_cast<std::size_t>(first_line + (p.line - 1));
  if (line == 0 || line > file_lines->size()) return {};
  return (*file_lines)[line - 1];
}

Error TextOrigin::error(Pos p, const std::string& message) const {
  return Error(map(p), message, line_at(p));
}

std::shared_ptr<const std::vector<std::string>> split_lines(std::string_view text) {
  auto lines = std::make_shared<std::vector<std::string>>();
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // "\r\n", "\n" and a lone "\r" each end a line, as the grammar counts them.
    if (text[i] != '\n' && text[i] != '\r') continue;
    lines->emplace_back(text.substr(start, i - start));
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    start = i + 1;
  }
  if (start < text.size()) lines->emplace_back(text.substr(start));
  return lines;
}

}  // namespace graphfuse::dsl
