// Symbolic dimensions: a dimension is a number or a polynomial with integer coefficients
// over named symbols (`batch`, `seq`, `past + seq`, `64*seq`), kept in one canonical form so
// that two expressions are equal exactly when their forms (and their texts) are equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphfuse::shape {

class SymDim {
 public:
  /// One term: coefficient times the product of `syms` (sorted, repeated for powers).
  struct Term {
    std::int64_t coef = 0;
    std::vector<std::string> syms;
    friend bool operator==(const Term&, const Term&) = default;
  };

  SymDim() = default;  ///< the number 0
  static SymDim number(std::int64_t n);
  /// One symbol; any text (ONNX dim_params are free text). A name that is not an
  /// identifier is an opaque symbol that takes part in no arithmetic (see combinable()).
  static SymDim symbol(std::string name);
  /// The form of a dimension's text: an expression in the syntax text() writes (integers,
  /// identifiers, + - * and parentheses), else the whole text as one opaque symbol.
  static SymDim parse(std::string_view text);

  bool is_number() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].syms.empty()); }
  /// The value when is_number().
  std::int64_t value() const { return terms_.empty() ? 0 : terms_[0].coef; }
  /// The canonical text: terms by degree (highest first), then by their symbols; the
  /// constant last (`2*batch*seq + past - 1`). Parsing it gives back an equal SymDim.
  std::string text() const;
  /// False for a dimension holding an opaque symbol: its text could not be parsed back
  /// once combined with others, so arithmetic on it gives nullopt.
  bool combinable() const;
  const std::vector<Term>& terms() const { return terms_; }

  friend bool operator==(const SymDim&, const SymDim&) = default;

  // Arithmetic; nullopt on int64 overflow, on an opaque symbol, or when the result would
  // grow past a small bound (shape expressions stay small; a runaway is unknown).
  friend std::optional<SymDim> add(const SymDim& a, const SymDim& b);
  friend std::optional<SymDim> sub(const SymDim& a, const SymDim& b);
  friend std::optional<SymDim> mul(const SymDim& a, const SymDim& b);
  /// a / b when b divides a exactly as polynomials and b is one term (a number or a
  /// monomial, e.g. (batch*seq*768) / (seq*12) = 64*batch); nullopt otherwise. Integer
  /// division of non-negative sizes, so exactness is what makes it symbolic-safe.
  friend std::optional<SymDim> div_exact(const SymDim& a, const SymDim& b);
  /// a - b when it is a number (then a and b compare by it), else nullopt.
  friend std::optional<std::int64_t> difference(const SymDim& a, const SymDim& b);

 private:
  static std::optional<SymDim> add_terms(const SymDim& a, const SymDim& b, bool negate_b);
  void normalize();
  bool accumulate(Term t);
  std::vector<Term> terms_;  // canonical order, no zero coefficients
};

std::optional<SymDim> add(const SymDim& a, const SymDim& b);
std::optional<SymDim> sub(const SymDim& a, const SymDim& b);
std::optional<SymDim> mul(const SymDim& a, const SymDim& b);
std::optional<SymDim> div_exact(const SymDim& a, const SymDim& b);
std::optional<std::int64_t> difference(const SymDim& a, const SymDim& b);

/// A dimension of a shape: a SymDim, or nullopt when nothing is known of it.
using Dim = std::optional<SymDim>;

}  // namespace graphfuse::shape
