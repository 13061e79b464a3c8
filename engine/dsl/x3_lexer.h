// Hand-written Spirit X3 primitives of the graphfuse grammar: tokens, skippers, positions and
// expectation points with readable messages. Internal: only parser.cpp includes it (the grammar
// is slow to compile, so it lives in one translation unit).
#pragma once

#include <algorithm>
#include <boost/spirit/home/x3.hpp>
#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ast.h"

namespace graphfuse::dsl::lex {

namespace x3 = boost::spirit::x3;
using It = const char*;

/// Thrown at an expectation point; parser.cpp turns it into a graphfuse::Error at `where`.
struct SyntaxError {
  It where;
  std::string message;
};

inline bool ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
inline bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
inline bool digit(char c) { return c >= '0' && c <= '9'; }

/// Assigns to a parser's attribute unless the caller asked for none.
template <class A, class V>
void assign(A& attr, V&& v) {
  if constexpr (!std::is_base_of_v<x3::unused_type, std::remove_cv_t<A>>) attr = std::forward<V>(v);
}

/// Skips blanks and '#' comments; also newlines when `newlines` is set. Statements end at
/// a newline, so the statement level skips without newlines and brackets skip with them:
/// that is how a statement continues over lines inside () [] {}.
struct Skipper : x3::parser<Skipper> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  bool newlines = false;

  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const&, RCtx&, Attr&) const {
    It p = first;
    while (p != last) {
      char c = *p;
      if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
        ++p;
      } else if (c == '#') {
        while (p != last && *p != '\n' && *p != '\r') ++p;
      } else if (newlines && (c == '\n' || c == '\r')) {
        ++p;
      } else {
        break;
      }
    }
    bool moved = p != first;
    first = p;
    return moved;
  }
};

/// Per-parse state reachable from the X3 context: the text (for positions), the two
/// skippers and the bracket depth (bounded so deep nesting cannot overflow the stack).
struct ParseState {
  It begin = nullptr;
  It end = nullptr;
  std::vector<It> line_starts;
  Skipper line_skipper{};
  Skipper bracket_skipper{};
  int depth = 0;

  ParseState(It b, It e) : begin(b), end(e) {
    bracket_skipper.newlines = true;
    line_starts.push_back(b);
    for (It p = b; p != e; ++p) {
      // "\r\n", "\n" and a lone "\r" each end a line, as x3::eol does.
      if (*p == '\r' && p + 1 != e && p[1] == '\n') ++p;
      if (*p == '\n' || *p == '\r') line_starts.push_back(p + 1);
    }
  }
  Pos pos(It it) const {
    // Positions are asked for front to back, so the line of the last one (or the next)
    // almost always holds this one: O(1) a token, where a binary search over a 10^6-line
    // file's line starts cost 20 steps each, and load time per node grew with the file.
    std::size_t l = hint_;
    if (line_starts[l] <= it && (l + 1 == line_starts.size() || it < line_starts[l + 1])) return at_(l, it);
    if (l + 1 < line_starts.size() && line_starts[l + 1] <= it &&
        (l + 2 == line_starts.size() || it < line_starts[l + 2]))
      return at_(l + 1, it);
    auto up = std::upper_bound(line_starts.begin(), line_starts.end(), it);
    return at_(static_cast<std::size_t>(up - line_starts.begin()) - 1, it);
  }

 private:
  Pos at_(std::size_t l, It it) const {
    hint_ = l;
    return Pos{static_cast<int>(l) + 1, static_cast<int>(it - line_starts[l]) + 1};
  }
  mutable std::size_t hint_ = 0;  // the line of the last position asked for
};
struct state_tag;

/// The one context type the grammar runs in (statement level and inside brackets alike),
/// so every rule is instantiated once.
template <class Fn>
bool with_context(ParseState& st, const Skipper& sk, Fn&& fn) {
  auto state_ctx = x3::make_context<state_tag>(st);
  auto ctx = x3::make_context<x3::skipper_tag>(sk, state_ctx);
  return fn(ctx);
}

/// Records the position of the next token in the enclosing rule's attribute (`.pos`).
/// Rules with semantic actions get no attribute in on_success, so this is a token instead.
struct MarkPos : x3::parser<MarkPos> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr&) const {
    It p = first;
    x3::skip_over(p, last, ctx);
    if constexpr (requires { rctx.pos = Pos{}; }) rctx.pos = x3::get<state_tag>(ctx).pos(p);
    return true;
  }
};

/// [A-Za-z_][A-Za-z0-9_]*
struct Ident : x3::parser<Ident> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (first == last || !ident_start(*first)) return false;
    It p = first;
    while (p != last && ident_char(*p)) ++p;
    assign(attr, std::string(first, p));
    first = p;
    return true;
  }
};

/// A keyword: the word not followed by an identifier character.
struct Kw : x3::parser<Kw> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  const char* word;
  constexpr explicit Kw(const char* w) : word(w) {}
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr&) const {
    x3::skip_over(first, last, ctx);
    It p = first;
    for (const char* w = word; *w; ++w, ++p)
      if (p == last || *p != *w) return false;
    if (p != last && ident_char(*p)) return false;
    first = p;
    return true;
  }
};

/// Decodes the body of a "..." string or a `...` name starting after the opening quote;
/// leaves p after the closing quote. Escapes: \q (the quote) \\ \n \t \r \xHH.
inline std::string decode_quoted(It open, It& p, It last, char quote, const char* what) {
  std::string out;
  for (;;) {
    if (p == last || *p == '\n' || *p == '\r')
      throw SyntaxError{open, std::string("unterminated ") + what + " (expected a closing " +
                                  (quote == '"' ? "'\"'" : "'`'") + " on the same line)"};
    char c = *p++;
    if (c == quote) return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    It esc = p - 1;
    char e = p == last ? '\0' : *p++;
    if (e == quote || e == '\\') out += e;
    else if (e == 'n') out += '\n';
    else if (e == 't') out += '\t';
    else if (e == 'r') out += '\r';
    else if (e == 'x' && last - p >= 2 && std::isxdigit(static_cast<unsigned char>(p[0])) &&
             std::isxdigit(static_cast<unsigned char>(p[1]))) {
      out += static_cast<char>(std::stoi(std::string(p, p + 2), nullptr, 16));
      p += 2;
    } else {
      throw SyntaxError{esc, std::string("unknown escape in ") + what +
                                 " (use \\\\, \\n, \\t, \\r, \\xHH or \\" + quote + ")"};
    }
  }
}

/// A string literal "..."
struct StringLit : x3::parser<StringLit> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (first == last || *first != '"') return false;
    It p = first + 1;
    assign(attr, decode_quoted(first, p, last, '"', "string"));
    first = p;
    return true;
  }
};

/// A name as written: an identifier, or any characters in backticks.
struct NameTok {
  std::string text;
  bool quoted = false;
};

/// A name: identifier or `backtick quoted`.
struct Name : x3::parser<Name> {
  using attribute_type = NameTok;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (first == last) return false;
    if (*first == '`') {
      It p = first + 1;
      std::string text = decode_quoted(first, p, last, '`', "quoted name");
      if (text.empty()) throw SyntaxError{first, "empty quoted name"};
      assign(attr, NameTok{std::move(text), true});
      first = p;
      return true;
    }
    if (!ident_start(*first)) return false;
    It p = first;
    while (p != last && ident_char(*p)) ++p;
    assign(attr, NameTok{std::string(first, p), false});
    first = p;
    return true;
  }
};

/// An op name: dotted identifiers (`com.microsoft.FusedConv`) or a quoted name.
struct OpName : x3::parser<OpName> {
  using attribute_type = std::string;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    if (first != last && *first == '`') {
      NameTok t;
      if (!Name{}.parse(first, last, ctx, rctx, t)) return false;
      assign(attr, std::move(t.text));
      return true;
    }
    if (first == last || !ident_start(*first)) return false;
    It p = first;
    for (;;) {
      while (p != last && ident_char(*p)) ++p;
      if (p + 1 < last && *p == '.' && ident_start(p[1])) ++p;
      else break;
    }
    assign(attr, std::string(first, p));
    first = p;
    return true;
  }
};

/// `node.attr` with no spaces around the dot.
struct AttrPath {
  NameTok node;
  std::string attr;
};
struct AttrPathP : x3::parser<AttrPathP> {
  using attribute_type = AttrPath;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    It p = first;
    AttrPath out;
    if (!Name{}.parse(p, last, ctx, rctx, out.node)) return false;
    if (p == last || *p != '.' || (p + 1 != last && p[1] == '.')) return false;
    ++p;
    if (p == last || !ident_start(*p)) throw SyntaxError{p, "expected an attribute name after '.'"};
    It q = p;
    while (q != last && ident_char(*q)) ++q;
    out.attr.assign(p, q);
    assign(attr, std::move(out));
    first = q;
    return true;
  }
};

/// A number: int64 (`3`, `-2`) or, with '.' or an exponent, a double (`1.0`, `1e-5`);
/// also `inf`, `-inf`, `nan`. Integers keep full int64 precision.
struct Number {
  bool is_int = true;
  std::int64_t i = 0;
  double d = 0;
};
struct NumberP : x3::parser<NumberP> {
  using attribute_type = Number;
  static bool const has_attribute = true;
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx&, Attr& attr) const {
    x3::skip_over(first, last, ctx);
    It p = first;
    bool neg = p != last && *p == '-';
    if (p != last && (*p == '-' || *p == '+')) ++p;
    Number n;
    auto word = [&](const char* w) {
      std::size_t len = std::char_traits<char>::length(w);
      if (static_cast<std::size_t>(last - p) < len || std::string_view(p, len) != w) return false;
      if (p + len != last && ident_char(p[len])) return false;
      p += len;
      return true;
    };
    if (word("inf") || word("nan")) {
      n.is_int = false;
      n.d = p[-1] == 'f' ? std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
      if (neg) n.d = -n.d;
    } else {
      It m = p;
      while (p != last && digit(*p)) ++p;
      bool int_digits = p != m;
      if (p != last && *p == '.' && (int_digits || (p + 1 != last && digit(p[1]))) &&
          !(p + 1 != last && p[1] == '.')) {
        n.is_int = false;
        ++p;
        while (p != last && digit(*p)) ++p;
      }
      if (!int_digits && n.is_int) return false;
      if (p != last && (*p == 'e' || *p == 'E')) {
        It e = p + 1;
        if (e != last && (*e == '+' || *e == '-')) ++e;
        if (e != last && digit(*e)) {
          n.is_int = false;
          p = e;
          while (p != last && digit(*p)) ++p;
        }
      }
      if (p != last && ident_char(*p)) return false;  // `3abc` is not a number
      It s = first + ((*first == '+') ? 1 : 0);
      if (n.is_int) {
        auto r = std::from_chars(s, p, n.i);
        if (r.ec != std::errc() || r.ptr != p) throw SyntaxError{first, "integer literal out of range"};
      } else {
        // from_chars rejects a leading '.'; parse the magnitude and apply the sign.
        std::string text(m, p);
        if (text[0] == '.') text.insert(text.begin(), '0');
        auto r = std::from_chars(text.data(), text.data() + text.size(), n.d);
        if (r.ec != std::errc()) throw SyntaxError{first, "number out of range"};
        if (neg) n.d = -n.d;
      }
    }
    assign(attr, n);
    first = p;
    return true;
  }
};

/// `subject` or else an Error "expected <what>" at the next token.
template <class Subject>
struct MustDirective : x3::unary_parser<Subject, MustDirective<Subject>> {
  using base_type = x3::unary_parser<Subject, MustDirective<Subject>>;
  static bool const is_pass_through_unary = true;
  static bool const handles_container = Subject::handles_container;
  const char* what;
  constexpr MustDirective(Subject const& s, const char* w) : base_type(s), what(w) {}
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    if (this->subject.parse(first, last, ctx, rctx, attr)) return true;
    It p = first;
    x3::skip_over(p, last, ctx);
    throw SyntaxError{p, std::string("expected ") + what};
  }
};
struct Must {
  const char* what;
  template <class S>
  constexpr auto operator[](S const& s) const {
    return MustDirective<typename x3::extension::as_parser<S>::value_type>(x3::as_parser(s), what);
  }
};

/// The inside of a bracket pair: newlines are whitespace there. Runs the subject in a fresh
/// context (same type as the statement level's) so that recursion through brackets does not
/// grow the context type, and bounds the nesting depth.
template <class Subject>
struct BracketDirective : x3::unary_parser<Subject, BracketDirective<Subject>> {
  using base_type = x3::unary_parser<Subject, BracketDirective<Subject>>;
  static bool const is_pass_through_unary = true;
  static bool const handles_container = Subject::handles_container;
  static constexpr int kMaxDepth = 200;
  constexpr explicit BracketDirective(Subject const& s) : base_type(s) {}
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr& attr) const {
    ParseState& st = x3::get<state_tag>(ctx);
    if (st.depth >= kMaxDepth) throw SyntaxError{first, "brackets nested too deeply"};
    struct Depth {
      int& d;
      ~Depth() { --d; }
    } guard{++st.depth};
    return with_context(st, st.bracket_skipper, [&](auto const& inner) {
      return this->subject.parse(first, last, inner, rctx, attr);
    });
  }
};
struct Brackets {
  template <class S>
  constexpr auto operator[](S const& s) const {
    return BracketDirective<typename x3::extension::as_parser<S>::value_type>(x3::as_parser(s));
  }
};

/// A closing bracket, or else "expected ')' <what(rule attribute)>": `what` sees the
/// enclosing rule's attribute so the message can name the call being closed.
template <class What>
struct Closer : x3::parser<Closer<What>> {
  using attribute_type = x3::unused_type;
  static bool const has_attribute = false;
  char close;
  What what;
  constexpr Closer(char c, What w) : close(c), what(w) {}
  template <class Ctx, class RCtx, class Attr>
  bool parse(It& first, It const& last, Ctx const& ctx, RCtx& rctx, Attr&) const {
    x3::skip_over(first, last, ctx);
    if (first != last && *first == close) {
      ++first;
      return true;
    }
    throw SyntaxError{first, std::string("expected '") + close + "' " + what(rctx)};
  }
};
template <class What>
constexpr Closer<What> closer(char c, What w) {
  return Closer<What>(c, w);
}

}  // namespace graphfuse::dsl::lex
