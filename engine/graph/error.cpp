// Formatting of positioned errors.
#include "graphfuse/error.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace graphfuse {

const std::string& FileName::empty_() {
  static const std::string* empty = new std::string();
  return *empty;
}

FileName::FileName(std::string_view name) {
  if (name.empty()) return;
  // Never destroyed: positions may outlive any other static.
  static auto* table = new std::unordered_set<std::string>();
  static auto* lock = new std::mutex();
  std::lock_guard<std::mutex> hold(*lock);
  name_ = &*table->emplace(name).first;
}

std::ostream& operator<<(std::ostream& out, const FileName& f) { return out << f.str(); }

std::string SourceLoc::str() const {
  std::string s = file;
  if (line > 0) {
    s += (s.empty() ? "" : ":") + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

static std::string compose(const SourceLoc& loc, const std::string& message) {
  std::string where = loc.str();
  return where.empty() ? "error: " + message : where + ": error: " + message;
}

Error::Error(SourceLoc loc, std::string message, std::string source_line)
    : std::runtime_error(compose(loc, message)),
      loc_(std::move(loc)),
      message_(std::move(message)),
      source_line_(std::move(source_line)) {}

std::string Error::pretty() const {
  std::string s = what();
  if (!source_line_.empty()) {
    s += "\n  " + source_line_ + "\n  ";
    for (int i = 1; i < loc_.column; ++i) s += (source_line_[i - 1] == '\t') ? '\t' : ' ';
    s += "^";
  }
  return s;
}

}  // namespace graphfuse
