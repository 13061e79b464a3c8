#include "match/attr_lists.h"

#include <string>
#include <type_traits>
#include <variant>

namespace graphfuse::match {

std::optional<std::vector<std::int64_t>> as_ints(const std::optional<AttrValue>& v) {
  if (!v) return std::nullopt;
  if (auto* l = std::get_if<std::vector<std::int64_t>>(&*v)) return *l;
  return std::nullopt;
}

std::optional<AttrValue> make_list(const std::vector<AttrValue>& items) {
  bool ints = true, nums = true, strs = true, bools = true;
  for (const AttrValue& v : items) {
    bool i = std::holds_alternative<std::int64_t>(v);
    ints &= i;
    nums &= i || std::holds_alternative<float>(v);
    strs &= std::holds_alternative<std::string>(v);
    bools &= std::holds_alternative<bool>(v);
  }
  if (items.empty() || ints) {
    std::vector<std::int64_t> out;
    for (const AttrValue& v : items) out.push_back(std::get<std::int64_t>(v));
    return out;
  }
  if (nums) {
    std::vector<float> out;
    for (const AttrValue& v : items)
      out.push_back(std::holds_alternative<float>(v) ? std::get<float>(v) : static_cast<float>(std::get<std::int64_t>(v)));
    return out;
  }
  if (strs) {
    std::vector<std::string> out;
    for (const AttrValue& v : items) out.push_back(std::get<std::string>(v));
    return out;
  }
  if (bools) {
    std::vector<bool> out;
    for (const AttrValue& v : items) out.push_back(std::get<bool>(v));
    return out;
  }
  return std::nullopt;
}

std::size_t list_size(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) return x.size();
        else if constexpr (requires { x.size(); }) return x.size();
        else return 0;
      },
      v);
}

std::optional<AttrValue> list_at(const AttrValue& l, std::int64_t i) {
  return std::visit(
      [&](const auto& x) -> std::optional<AttrValue> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<float>> ||
                      std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, std::vector<bool>>) {
          const auto n = static_cast<std::int64_t>(x.size());
          std::int64_t k = i < 0 ? i + n : i;
          if (k < 0 || k >= n) return std::nullopt;
          return AttrValue(typename T::value_type(x[static_cast<std::size_t>(k)]));
        } else {
          return std::nullopt;
        }
      },
      l);
}

std::optional<AttrValue> list_concat(const AttrValue& l, const AttrValue& r) {
  auto ints = [](const AttrValue& v) { return std::get_if<std::vector<std::int64_t>>(&v); };
  auto floats = [](const AttrValue& v) -> std::optional<std::vector<float>> {
    if (auto* f = std::get_if<std::vector<float>>(&v)) return *f;
    if (auto* i = std::get_if<std::vector<std::int64_t>>(&v)) return std::vector<float>(i->begin(), i->end());
    return std::nullopt;
  };
  if (ints(l) && ints(r)) {
    std::vector<std::int64_t> out = *ints(l);
    out.insert(out.end(), ints(r)->begin(), ints(r)->end());
    return out;
  }
  if (auto fl = floats(l), fr = floats(r); fl && fr) {
    fl->insert(fl->end(), fr->begin(), fr->end());
    return *fl;
  }
  auto* sl = std::get_if<std::vector<std::string>>(&l);
  auto* sr = std::get_if<std::vector<std::string>>(&r);
  if (sl && sr) {
    std::vector<std::string> out = *sl;
    out.insert(out.end(), sr->begin(), sr->end());
    return out;
  }
  return std::nullopt;
}

}  // namespace graphfuse::match
