// graphfuse's JSON syntax, checked without building anything (the error path of the
// simdjson-based reader), its string escapes, and the marking of bytes simdjson refuses.
#include "json_syntax.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace graphfuse::textio {

namespace {

constexpr int kMaxDepth = kMaxNesting;  // deeper nesting is no graph; keeps the recursion bounded

/// The bytes that end a run of plain string bytes: the closing quote, an escape, a newline.
constexpr auto kEndsStringRun = [] {
  std::array<bool, 256> t{};
  t['"'] = t['\\'] = t['\n'] = true;
  return t;
}();

/// Recursive descent over the bytes; stops at the first offending character, where a loud
/// check throws its Error and a quiet one returns false.
class SyntaxCheck {
 public:
  SyntaxCheck(std::string_view text, const YamlSource* src) : t_(text), src_(src) {}

  bool run() {
    skip_ws();
    if (p_ == t_.size()) return true;
    if (!value(0)) return false;
    skip_ws();
    if (p_ != t_.size()) return fail("unexpected text after the top-level value");
    return true;
  }

 private:
  bool fail(const std::string& msg) const {
    if (src_)
      src_->fail(SourceLoc{src_->file, line_ + 1, static_cast<int>(p_ - line_start_) + 1}, "malformed YAML/JSON: " + msg);
    return false;
  }

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

  // Inlined into container(): the check runs over every piece of a big file, and a call
  // per value was a tenth of it.
  [[gnu::always_inline]] inline bool value(int depth) {
    if (depth > kMaxDepth) return fail("values nested too deeply");
    char c = t_[p_];
    if (c == '{') return container(true, '}', depth);
    if (c == '[') return container(false, ']', depth);
    if (c == '"') return string();
    return bare();
  }

  bool container(bool map, char close, int depth) {
    const char* unclosed = map ? "end of map flow not found" : "end of sequence flow not found";
    ++p_;
    skip_ws();
    if (p_ < t_.size() && t_[p_] == close) {
      ++p_;
      return true;
    }
    while (true) {
      if (p_ == t_.size()) return fail(unclosed);
      if (map) {
        if (t_[p_] != '"') return fail("expected a quoted key");
        if (!string()) return false;
        skip_ws();
        if (p_ == t_.size()) return fail(unclosed);
        if (t_[p_] != ':') return fail("expected ':' after a key");
        ++p_;
        skip_ws();
        if (p_ == t_.size()) return fail(unclosed);
      }
      if (t_[p_] == ',' || t_[p_] == close) return fail("expected a value");
      if (!value(depth + 1)) return false;
      skip_ws();
      if (p_ == t_.size()) return fail(unclosed);
      if (t_[p_] == close) {
        ++p_;
        return true;
      }
      if (t_[p_] != ',')
        return fail(map ? "expected ',' or '}' after a mapping entry" : "expected ',' or ']' after a list element");
      ++p_;
      skip_ws();
      if (p_ < t_.size() && t_[p_] == close) return fail("expected a value after ','");
    }
  }

  bool string() {
    ++p_;
    while (true) {
      // One table lookup a byte: the reader runs this check over every piece of a big file.
      while (p_ < t_.size() && !kEndsStringRun[static_cast<unsigned char>(t_[p_])]) ++p_;
      if (p_ == t_.size() || t_[p_] == '\n') return fail("end of string not found");
      if (t_[p_++] == '"') return true;
      if (p_ == t_.size()) return fail("end of string not found");
      switch (t_[p_++]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': break;
        case 'u':
          if (!hex4()) return false;
          break;
        default: --p_; return fail("unknown escape character '" + std::string(1, t_[p_]) + "'");
      }
    }
  }

  bool hex4() {
    for (int i = 0; i < 4; ++i, ++p_)
      if (p_ >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[p_])))
        return fail("a \\u escape needs four hex digits");
    return true;
  }

  /// A number, true/false/null, or the writer's NaN/Infinity.
  bool bare() {
    std::size_t start = p_;
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"' || c == ' ' ||
          c == '\t' || c == '\r' || c == '\n')
        break;
      ++p_;
    }
    if (p_ == start) return fail(std::string("unexpected character '") + t_[p_] + "'");
    return true;
  }

  std::string_view t_;
  const YamlSource* src_;  // null: quiet
  std::size_t p_ = 0, line_start_ = 0;
  int line_ = 0;
};

int hex_digit(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/// The four hex digits at raw[p], or -1.
long hex4(std::string_view raw, std::size_t p) {
  if (p + 4 > raw.size()) return -1;
  long v = 0;
  for (std::size_t i = p; i < p + 4; ++i) {
    int d = hex_digit(raw[i]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void utf8(std::string& s, unsigned long u) {
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

/// The length of the well-formed UTF-8 sequence at t[i] (Unicode's table 3-7), 0 if none.
std::size_t utf8_length(std::string_view t, std::size_t i) {
  auto b = [&](std::size_t k) { return i + k < t.size() ? static_cast<unsigned char>(t[i + k]) : 0u; };
  auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
  unsigned c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

void check_json_syntax(std::string_view text, const YamlSource& src) { SyntaxCheck(text, &src).run(); }

bool json_syntax_ok(std::string_view text) { return SyntaxCheck(text, nullptr).run(); }

bool json_unescape(std::string_view raw, std::string& out) {
  for (std::size_t p = 0; p < raw.size();) {
    const char* bs = static_cast<const char*>(std::memchr(raw.data() + p, '\\', raw.size() - p));
    std::size_t end = bs ? static_cast<std::size_t>(bs - raw.data()) : raw.size();
    out.append(raw.data() + p, end - p);
    if (end == raw.size()) return true;
    p = end + 1;
    if (p == raw.size()) return false;
    switch (raw[p++]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        long u = hex4(raw, p);
        if (u < 0) return false;
        p += 4;
        if (u >= 0xD800 && u < 0xDC00 && raw.substr(p, 2) == "\\u") {  // a surrogate pair
          long lo = hex4(raw, p + 2);
          if (lo >= 0xDC00 && lo < 0xE000) {
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
          }
        }
        utf8(out, static_cast<unsigned long>(u));
        break;
      }
      default: return false;
    }
  }
  return true;
}

bool MarkedBytes::mark(std::string_view t) {
  text_.clear();
  marks_.clear();
  bool in_string = false, escaped = false, any = false;
  auto put_mark = [&](unsigned char b) {
    marks_.push_back(text_.size());
    text_ += static_cast<char>(0xF4);
    text_ += static_cast<char>(0x8F);
    text_ += static_cast<char>(0xBC + (b >> 6));
    text_ += static_cast<char>(0x80 | (b & 0x3F));
    any = true;
  };
  text_.reserve(t.size() + t.size() / 8);
  for (std::size_t i = 0; i < t.size();) {
    auto c = static_cast<unsigned char>(t[i]);
    if (c < 0x80) {
      if (in_string && !escaped && c < 0x20) {
        put_mark(c);
      } else {
        text_ += static_cast<char>(c);
        if (escaped) escaped = false;
        else if (c == '"') in_string = !in_string;
        else if (c == '\\' && in_string) escaped = true;
      }
      ++i;
      continue;
    }
    escaped = false;
    std::size_t n = utf8_length(t, i);
    // U+10FF00..U+10FFFF is F4 8F BC..BF xx: already text that restore() would take for marks.
    bool marked_range = n == 4 && c == 0xF4 && static_cast<unsigned char>(t[i + 1]) == 0x8F &&
                        static_cast<unsigned char>(t[i + 2]) >= 0xBC;
    if (n == 0 || marked_range) {
      for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) put_mark(static_cast<unsigned char>(t[i + k]));
      i += std::max<std::size_t>(n, 1);
    } else {
      text_.append(t.data() + i, n);
      i += n;
    }
  }
  if (!any) text_.clear();
  return any;
}

std::size_t MarkedBytes::original_offset(std::size_t at) const {
  auto before = static_cast<std::size_t>(std::lower_bound(marks_.begin(), marks_.end(), at) - marks_.begin());
  return at - 3 * before;
}

bool MarkedBytes::has_mark(std::string_view raw) {
  for (std::size_t i = 0; i + 3 < raw.size(); ++i)
    if (static_cast<unsigned char>(raw[i]) == 0xF4 && static_cast<unsigned char>(raw[i + 1]) == 0x8F &&
        static_cast<unsigned char>(raw[i + 2]) >= 0xBC)
      return true;
  return false;
}

void MarkedBytes::restore(std::string_view raw, std::string& out) {
  for (std::size_t i = 0; i < raw.size();) {
    if (i + 3 < raw.size() && static_cast<unsigned char>(raw[i]) == 0xF4 &&
        static_cast<unsigned char>(raw[i + 1]) == 0x8F && static_cast<unsigned char>(raw[i + 2]) >= 0xBC) {
      out += static_cast<char>(((static_cast<unsigned char>(raw[i + 2]) - 0xBC) << 6) |
                               (static_cast<unsigned char>(raw[i + 3]) & 0x3F));
      i += 4;
    } else {
      out += raw[i++];
    }
  }
}

}  // namespace graphfuse::textio
