// Attribute comparison for pattern constraints.
#include "match/attr_compare.h"

#include <optional>

namespace graphfuse::match {

namespace {

std::optional<double> as_number(const AttrValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  if (auto* f = std::get_if<float>(&v)) return static_cast<double>(*f);
  return std::nullopt;
}

// A numeric list as doubles, so int and float lists compare by value.
std::optional<std::vector<double>> as_numbers(const AttrValue& v) {
  if (auto* is = std::get_if<std::vector<std::int64_t>>(&v))
    return std::vector<double>(is->begin(), is->end());
  if (auto* fs = std::get_if<std::vector<float>>(&v))
    return std::vector<double>(fs->begin(), fs->end());
  return std::nullopt;
}

bool is_empty_list(const AttrValue& v) {
  return std::visit(
      [](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (requires { x.empty(); } && !std::is_same_v<T, std::string>) return x.empty();
        else return false;
      },
      v);
}

bool equal(const AttrValue& a, const AttrValue& b) {
  if (auto x = as_number(a)) {
    auto y = as_number(b);
    return y && *x == *y;
  }
  if (is_empty_list(a) && is_empty_list(b)) return true;
  if (auto xs = as_numbers(a)) {
    auto ys = as_numbers(b);
    return ys && *xs == *ys;
  }
  return a == b;
}

// -1, 0, 1, or nullopt when the two are not ordered (different kinds, lists).
std::optional<int> order(const AttrValue& a, const AttrValue& b) {
  auto x = as_number(a), y = as_number(b);
  if (x && y) return *x < *y ? -1 : (*x > *y ? 1 : 0);
  auto* s = std::get_if<std::string>(&a);
  auto* t = std::get_if<std::string>(&b);
  if (s && t) return s->compare(*t) < 0 ? -1 : (*s == *t ? 0 : 1);
  return std::nullopt;
}

template <class T>
bool contains(const AttrValue& a, const std::vector<T>& list) {
  for (const T& e : list)
    if (equal(a, AttrValue(e))) return true;
  return false;
}

bool member(const AttrValue& a, const AttrValue& list) {
  return std::visit(
      [&](const auto& l) {
        using T = std::decay_t<decltype(l)>;
        if constexpr (std::is_same_v<T, std::vector<std::int64_t>> ||
                      std::is_same_v<T, std::vector<float>> ||
                      std::is_same_v<T, std::vector<std::string>>)
          return contains(a, l);
        else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          for (bool e : l)
            if (equal(a, AttrValue(e))) return true;
          return false;
        } else
          return false;
      },
      list);
}

}  // namespace

bool attr_compare(const AttrValue& a, Cmp cmp, const AttrValue& b) {
  switch (cmp) {
    case Cmp::Eq: return equal(a, b);
    case Cmp::Ne: return !equal(a, b);
    case Cmp::In: return member(a, b);
    case Cmp::Has: return true;
    case Cmp::Absent: return false;
    default: break;
  }
  auto o = order(a, b);
  if (!o) return false;
  switch (cmp) {
    case Cmp::Lt: return *o < 0;
    case Cmp::Le: return *o <= 0;
    case Cmp::Gt: return *o > 0;
    case Cmp::Ge: return *o >= 0;
    default: return false;
  }
}

const char* cmp_name(Cmp c) {
  switch (c) {
    case Cmp::Eq: return "==";
    case Cmp::Ne: return "!=";
    case Cmp::Lt: return "<";
    case Cmp::Le: return "<=";
    case Cmp::Gt: return ">";
    case Cmp::Ge: return ">=";
    case Cmp::In: return "in";
    case Cmp::Has: return "has";
    case Cmp::Absent: return "absent";
  }
  return "?";
}

}  // namespace graphfuse::match
