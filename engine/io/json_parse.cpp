// The JSON reader: recursive descent over the bytes, one DocTree node per value. Strings
// without escapes are views into the text (no copy); only escaped ones are kept in the tree.
#include "json_parse.h"

namespace graphfuse::textio {

namespace {

constexpr int kMaxDepth = kMaxNesting;  // deeper nesting is no graph; keeps the recursion bounded

class JsonParser {
 public:
  JsonParser(std::string_view text, DocTree& tree, const YamlSource& src) : t_(text), tree_(tree), src_(src) {}

  std::uint32_t parse() {
    skip_ws();
    if (p_ == t_.size()) return DocTree::kNone;
    std::uint32_t root = value(0);
    skip_ws();
    if (p_ != t_.size()) fail("unexpected text after the top-level value");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    src_.fail(SourceLoc{src_.file, line_ + 1, col() + 1}, "malformed YAML/JSON: " + msg);
  }
  int col() const { return static_cast<int>(p_ - line_start_); }

  void skip_ws() {
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++p_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else {
        return;
      }
    }
  }

  std::uint32_t value(int depth) {
    if (depth > kMaxDepth) fail("values nested too deeply");
    if (tree_.size() >= DocTree::kMaxValues) fail("more than " + std::to_string(DocTree::kMaxValues) + " values");
    char c = t_[p_];
    if (c == '{') return container(DocTree::Kind::Map, '}', depth);
    if (c == '[') return container(DocTree::Kind::Seq, ']', depth);
    if (c == '"') return string();
    return bare();
  }

  std::uint32_t container(DocTree::Kind kind, char close, int depth) {
    std::uint32_t self = tree_.add(kind, line_, col());
    bool map = kind == DocTree::Kind::Map;
    const char* unclosed = map ? "end of map flow not found" : "end of sequence flow not found";
    ++p_;
    skip_ws();
    if (p_ < t_.size() && t_[p_] == close) {
      ++p_;
      return self;
    }
    while (true) {
      if (p_ == t_.size()) fail(unclosed);
      if (map) {
        if (t_[p_] != '"') fail("expected a quoted key");
        tree_.append(self, string());
        skip_ws();
        if (p_ == t_.size()) fail(unclosed);
        if (t_[p_] != ':') fail("expected ':' after a key");
        ++p_;
        skip_ws();
        if (p_ == t_.size()) fail(unclosed);
      }
      if (t_[p_] == ',' || t_[p_] == close) fail("expected a value");
      tree_.append(self, value(depth + 1));
      skip_ws();
      if (p_ == t_.size()) fail(unclosed);
      if (t_[p_] == close) {
        ++p_;
        return self;
      }
      if (t_[p_] != ',') fail(map ? "expected ',' or '}' after a mapping entry" : "expected ',' or ']' after a list element");
      ++p_;
      skip_ws();
      if (p_ < t_.size() && t_[p_] == close) fail("expected a value after ','");
    }
  }

  std::uint32_t string() {
    std::uint32_t self = tree_.add(DocTree::Kind::Scalar, line_, col());
    tree_.node(self).style = DocTree::Style::Quoted;
    std::size_t start = ++p_;
    while (p_ < t_.size() && t_[p_] != '"' && t_[p_] != '\\' && t_[p_] != '\n') ++p_;
    if (p_ < t_.size() && t_[p_] == '"') {  // the common case: no escapes, no copy
      tree_.node(self).text = t_.substr(start, p_ - start);
      ++p_;
      return self;
    }
    std::string s(t_.substr(start, p_ - start));
    while (true) {
      if (p_ == t_.size() || t_[p_] == '\n') fail("end of string not found");
      char c = t_[p_];
      if (c == '"') break;
      if (c != '\\') {
        s += c;
        ++p_;
        continue;
      }
      if (++p_ == t_.size()) fail("end of string not found");
      switch (t_[p_++]) {
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case '/': s += '/'; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': utf8(s, code_point()); break;
        default: --p_; fail("unknown escape character '" + std::string(1, t_[p_]) + "'");
      }
    }
    ++p_;
    tree_.node(self).text = tree_.keep(std::move(s));
    return self;
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      char c = p_ < t_.size() ? t_[p_] : '\0';
      unsigned d = c >= '0' && c <= '9' ? unsigned(c - '0')
                   : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                          : 16u;
      if (d == 16) fail("a \\u escape needs four hex digits");
      v = v * 16 + d;
    }
    return v;
  }

  unsigned code_point() {
    unsigned u = hex4();
    if (u >= 0xD800 && u < 0xDC00 && t_.substr(p_, 2) == "\\u") {  // a surrogate pair
      std::size_t back = p_;
      p_ += 2;
      unsigned lo = hex4();
      if (lo >= 0xDC00 && lo < 0xE000) return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      p_ = back;
    }
    return u;
  }

  static void utf8(std::string& s, unsigned u) {
    if (u < 0x80) {
      s += static_cast<char>(u);
    } else if (u < 0x800) {
      s += static_cast<char>(0xC0 | (u >> 6));
      s += static_cast<char>(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
      s += static_cast<char>(0xE0 | (u >> 12));
      s += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (u & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (u >> 18));
      s += static_cast<char>(0x80 | ((u >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((u >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (u & 0x3F));
    }
  }

  /// A number, true/false/null, or the writer's NaN/Infinity: a plain scalar whose type
  /// the YAML rules decide, as yaml-cpp read it.
  std::uint32_t bare() {
    std::int32_t line = line_, column = col();
    std::size_t start = p_;
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"' || c == ' ' ||
          c == '\t' || c == '\r' || c == '\n')
        break;
      ++p_;
    }
    if (p_ == start) fail(std::string("unexpected character '") + t_[p_] + "'");
    std::string_view word = t_.substr(start, p_ - start);
    if (word == "null") return tree_.add(DocTree::Kind::Null, line, column);
    std::uint32_t self = tree_.add(DocTree::Kind::Scalar, line, column);
    tree_.node(self).text = word;
    return self;
  }

  std::string_view t_;
  DocTree& tree_;
  const YamlSource& src_;
  std::size_t p_ = 0, line_start_ = 0;
  int line_ = 0;
};

}  // namespace

std::uint32_t parse_json(std::string_view text, DocTree& tree, const YamlSource& src) {
  return JsonParser(text, tree, src).parse();
}

}  // namespace graphfuse::textio
