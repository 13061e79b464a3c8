// Symbolic dimensions (see sym_dim.h): a small canonical polynomial form.
#include "shape/sym_dim.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace graphfuse::shape {

namespace {

// Bounds on an expression: shape arithmetic in exported models has a few terms of low
// degree; anything bigger is a runaway (a loop of Mul over a shape) and becomes unknown.
constexpr std::size_t kMaxTerms = 16;
constexpr std::size_t kMaxDegree = 6;

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_ident(std::string_view s) {
  if (s.empty() || !ident_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), ident_char);
}

// Higher degree first, then the symbols in order: a deterministic, readable order.
bool term_before(const SymDim::Term& a, const SymDim::Term& b) {
  if (a.syms.size() != b.syms.size()) return a.syms.size() > b.syms.size();
  return a.syms < b.syms;
}

// Recursive descent over the text() syntax; fails (nullopt) on anything else.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  std::optional<SymDim> all() {
    auto e = expr(0);
    skip();
    if (!e || p_ != s_.size()) return std::nullopt;
    return e;
  }

 private:
  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  bool eat(char c) {
    skip();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  std::optional<SymDim> expr(int depth) {
    if (depth > 32) return std::nullopt;
    auto v = term(depth);
    while (v) {
      if (eat('+')) {
        auto r = term(depth);
        v = r ? add(*v, *r) : std::nullopt;
      } else if (eat('-')) {
        auto r = term(depth);
        v = r ? sub(*v, *r) : std::nullopt;
      } else {
        break;
      }
    }
    return v;
  }
  std::optional<SymDim> term(int depth) {
    auto v = factor(depth);
    while (v && eat('*')) {
      auto r = factor(depth);
      v = r ? mul(*v, *r) : std::nullopt;
    }
    return v;
  }
  std::optional<SymDim> factor(int depth) {
    skip();
    if (p_ >= s_.size()) return std::nullopt;
    char c = s_[p_];
    if (c == '-') {
      ++p_;
      auto f = factor(depth + 1);
      return f ? sub(SymDim{}, *f) : std::nullopt;
    }
    if (c == '(') {
      ++p_;
      auto e = expr(depth + 1);
      if (!e || !eat(')')) return std::nullopt;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t n = 0;
      while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
        if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, s_[p_] - '0', &n)) return std::nullopt;
        ++p_;
      }
      if (p_ < s_.size() && ident_char(s_[p_])) return std::nullopt;  // `2seq`
      return SymDim::number(n);
    }
    if (ident_start(c)) {
      std::size_t b = p_;
      while (p_ < s_.size() && ident_char(s_[p_])) ++p_;
      return SymDim::symbol(std::string(s_.substr(b, p_ - b)));
    }
    return std::nullopt;
  }
  std::string_view s_;
  std::size_t p_ = 0;
};

}  // namespace

SymDim SymDim::number(std::int64_t n) {
  SymDim d;
  if (n != 0) d.terms_.push_back(Term{n, {}});
  return d;
}

SymDim SymDim::symbol(std::string name) {
  SymDim d;
  d.terms_.push_back(Term{1, {std::move(name)}});
  return d;
}

SymDim SymDim::parse(std::string_view text) {
  if (auto d = Parser(text).all()) return *d;
  return symbol(std::string(text));
}

bool SymDim::combinable() const {
  for (const Term& t : terms_)
    for (const std::string& s : t.syms)
      if (!is_ident(s)) return false;
  return true;
}

void SymDim::normalize() {
  for (Term& t : terms_) std::sort(t.syms.begin(), t.syms.end());
  std::sort(terms_.begin(), terms_.end(), term_before);
  std::vector<Term> out;
  for (Term& t : terms_) {
    if (!out.empty() && out.back().syms == t.syms) {
      // Overflow was checked by the callers that can produce it (add/sub/mul).
      out.back().coef += t.coef;
    } else {
      out.push_back(std::move(t));
    }
  }
  std::erase_if(out, [](const Term& t) { return t.coef == 0; });
  terms_ = std::move(out);
}

std::string SymDim::text() const {
  if (terms_.empty()) return "0";
  std::string s;
  for (std::size_t i = 0; i < terms_.size(); ++i) {
    const Term& t = terms_[i];
    std::int64_t c = t.coef;
    bool negative = c < 0;
    // |INT64_MIN| has no int64: print it through the unsigned magnitude.
    std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(c) : static_cast<std::uint64_t>(c);
    if (i == 0) s += negative ? "-" : "";
    else s += negative ? " - " : " + ";
    bool first = true;
    if (mag != 1 || t.syms.empty()) {
      s += std::to_string(mag);
      first = false;
    }
    for (const std::string& sym : t.syms) {
      if (!first) s += '*';
      s += sym;
      first = false;
    }
  }
  return s;
}

// Adds a term to an unnormalized sum: onto the term of the same symbols, or as a new
// term; false when the coefficient overflows.
bool SymDim::accumulate(Term t) {
  auto same = std::find_if(terms_.begin(), terms_.end(), [&](const Term& u) { return u.syms == t.syms; });
  if (same == terms_.end()) {
    terms_.push_back(std::move(t));
    return true;
  }
  return !__builtin_add_overflow(same->coef, t.coef, &same->coef);
}

// Sum of two canonical forms with overflow checks on coinciding terms.
std::optional<SymDim> SymDim::add_terms(const SymDim& a, const SymDim& b, bool negate_b) {
  if (!a.combinable() || !b.combinable()) return std::nullopt;
  SymDim out = a;
  for (SymDim::Term t : b.terms_) {
    if (negate_b && __builtin_sub_overflow(std::int64_t{0}, t.coef, &t.coef)) return std::nullopt;
    if (!out.accumulate(std::move(t))) return std::nullopt;
  }
  out.normalize();
  if (out.terms_.size() > kMaxTerms) return std::nullopt;
  return out;
}

std::optional<SymDim> add(const SymDim& a, const SymDim& b) { return SymDim::add_terms(a, b, false); }
std::optional<SymDim> sub(const SymDim& a, const SymDim& b) { return SymDim::add_terms(a, b, true); }

std::optional<SymDim> mul(const SymDim& a, const SymDim& b) {
  if (!a.combinable() || !b.combinable()) return std::nullopt;
  SymDim out;
  for (const SymDim::Term& x : a.terms_) {
    for (const SymDim::Term& y : b.terms_) {
      SymDim::Term t;
      if (__builtin_mul_overflow(x.coef, y.coef, &t.coef)) return std::nullopt;
      t.syms = x.syms;
      t.syms.insert(t.syms.end(), y.syms.begin(), y.syms.end());
      if (t.syms.size() > kMaxDegree) return std::nullopt;
      std::sort(t.syms.begin(), t.syms.end());
      if (!out.accumulate(std::move(t))) return std::nullopt;
    }
  }
  out.normalize();
  if (out.terms_.size() > kMaxTerms) return std::nullopt;
  return out;
}

std::optional<SymDim> div_exact(const SymDim& a, const SymDim& b) {
  if (!a.combinable() || !b.combinable() || b.terms_.size() != 1) return std::nullopt;
  const SymDim::Term& d = b.terms_[0];
  SymDim out;
  for (const SymDim::Term& x : a.terms_) {
    if (d.coef == -1 && x.coef == INT64_MIN) return std::nullopt;
    if (x.coef % d.coef != 0) return std::nullopt;
    SymDim::Term t{x.coef / d.coef, {}};
    // Remove d's symbols from x's (both sorted): each must be there.
    std::size_t j = 0;
    for (const std::string& s : x.syms) {
      if (j < d.syms.size() && s == d.syms[j]) ++j;
      else t.syms.push_back(s);
    }
    if (j != d.syms.size()) return std::nullopt;
    out.terms_.push_back(std::move(t));
  }
  out.normalize();
  return out;
}

std::optional<std::int64_t> difference(const SymDim& a, const SymDim& b) {
  auto d = sub(a, b);
  if (!d || !d->is_number()) return std::nullopt;
  return d->value();
}

}  // namespace graphfuse::shape
