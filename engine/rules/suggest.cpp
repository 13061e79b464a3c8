// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
// two adjacent characters each cost one. Names are short, so the quadratic table is fine.
#include "rules/suggest.h"

#include <algorithm>
#include <cctype>

namespace graphfuse::rules {

namespace {
std::size_t distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}
}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  // One edit in short names, about a third of the letters in longer ones: close enough to
  // be a typo, far enough that unrelated names are not offered.
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::size_t best = limit + 1;
  const std::string* pick = nullptr;
  // Case differences cost nothing: `Relu` for `ReLU` is the commonest slip between op sets.
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string w = lower(word);
  for (const std::string& k : known) {
    std::size_t d = distance(w, lower(k));
    if (d < best) best = d, pick = &k;
  }
  return pick ? "; did you mean '" + *pick + "'?" : "";
}

}  // namespace graphfuse::rules

namespace graphfuse::rules {

std::string undeclared_attribute(const OpSchema& s, const std::string& op, const std::string& key) {
  if (!s.attrs_declared || s.attrs.count(key) || (!key.empty() && key[0] == '_')) return "";
  std::vector<std::string> known;
  std::string list;
  for (const auto& [name, kind] : s.attrs) {
    known.push_back(name);
    list += (list.empty() ? "" : ", ") + name;
  }
  return "attribute '" + key + "' is not declared for " + op + " (declared at " + s.loc.str() + " with " +
         (list.empty() ? std::string("no attributes") : "attrs " + list) + ")" + did_you_mean(key, known);
}

}  // namespace graphfuse::rules
