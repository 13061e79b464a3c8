// Rule files' YAML for the loader (see rule_yaml.h).
#include "rules/rule_yaml.h"

#include <algorithm>
#include <string_view>

namespace graphfuse::rules {

namespace {

// The line without its end ("\n" or "\r\n").
std::string_view body(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// `tests:`, optionally followed by blanks and a comment: a key whose value is a block below.
bool opens_tests_block(std::string_view line) {
  line = body(line);
  if (line.substr(0, 6) != "tests:") return false;
  std::string_view rest = line.substr(6);
  const std::size_t k = rest.find_first_not_of(' ');
  return k == std::string_view::npos || rest[k] == '#';
}

// A line inside a top-level block value: empty, indented, a comment, or a compact
// sequence entry at column 0 ("- x", "-"); not "---" / "..." nor the next key.
bool inside_block(std::string_view line) {
  line = body(line);
  if (line.empty() || line[0] == ' ' || line[0] == '#') return true;
  return line[0] == '-' && (line.size() == 1 || line[1] == ' ');
}

}  // namespace

std::string without_tests(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  bool cutting = false, cut = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const std::size_t next = nl == std::string::npos ? text.size() : nl + 1;
    const std::string_view line(text.data() + pos, next - pos);
    if (cutting && !inside_block(line)) cutting = false;
    if (cutting) {
      if (nl != std::string::npos) out += '\n';
    } else {
      out.append(line);
      if (opens_tests_block(line)) cutting = cut = true;
    }
    pos = next;
  }
  return cut ? out : text;
}

namespace {

std::size_t indent_of(std::string_view line) {
  const std::size_t k = line.find_first_not_of(' ');
  return k == std::string_view::npos ? line.size() : k;
}

// The line ends with a block scalar header (`key: |`, `- >-`, `|2`), a comment after it
// allowed: the lines below that are blank or indented deeper are its text. `*keep`: the
// header keeps trailing blank lines (`|+`), which a blanked comment line would add to it.
bool opens_block_scalar(std::string_view line, bool* keep) {
  line = body(line);
  if (const std::size_t hash = line.find(" #"); hash != std::string_view::npos) line = line.substr(0, hash);
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  *keep = false;
  while (!line.empty() && (line.back() == '-' || line.back() == '+' || (line.back() >= '0' && line.back() <= '9'))) {
    *keep = *keep || line.back() == '+';
    line.remove_suffix(1);
  }
  if (line.empty() || (line.back() != '|' && line.back() != '>')) return false;
  line.remove_suffix(1);
  return line.empty() || line.back() == ' ' || line.back() == ':' || line.back() == '-';
}

// A quoted scalar that starts on this line (at a token start) and does not end on it: its
// next lines are its text, where a '#' is no comment.
bool opens_quoted_lines(std::string_view line) {
  line = body(line);
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (quote == '"' && c == '\\') ++i;
      else if (c == quote && quote == '\'' && i + 1 < line.size() && line[i + 1] == '\'') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '#' && (i == 0 || line[i - 1] == ' ')) return false;  // the rest is a comment
    const bool token_start = i == 0 || std::string_view(" [{,:-").find(line[i - 1]) != std::string_view::npos;
    if ((c == '"' || c == '\'') && token_start) quote = c;
  }
  return quote != 0;
}

}  // namespace

std::string without_comment_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  // While inside a block scalar: the indentation of the line that opened it.
  bool in_scalar = false;
  std::size_t scalar_parent = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    const std::size_t next = nl == std::string::npos ? text.size() : nl + 1;
    const std::string_view line(text.data() + pos, next - pos);
    const std::string_view b = body(line);
    const std::size_t indent = indent_of(b);
    const bool blank = indent == b.size();
    if (in_scalar && !blank && indent <= scalar_parent) in_scalar = false;
    if (in_scalar || blank || b[indent] != '#') {
      out.append(line);
      if (!in_scalar && !blank) {
        // A multi-line quoted scalar: comment-looking lines may be its text; stop here.
        bool keep = false;
        const bool block = opens_block_scalar(b, &keep);
        if (opens_quoted_lines(b) || keep) {
          out.append(text, next, std::string::npos);
          return out;
        }
        if (block) {
          in_scalar = true;
          scalar_parent = indent;
        }
      }
    } else if (nl != std::string::npos) {
      out += '\n';  // a comment line: blank, every other line keeps its number
    }
    pos = next;
  }
  return out;
}

YAML::Node parse_rule_yaml(const std::string& text) {
  std::string shorter = without_comment_lines(without_tests(text));
  if (shorter.size() == text.size()) return YAML::Load(text);
  try {
    return YAML::Load(shorter);
  } catch (const YAML::Exception&) {
    return YAML::Load(text);  // the error as the file has it
  }
}

RuleYamlPool::RuleYamlPool(std::vector<Input> inputs) {
  for (Input& in : inputs) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->in = std::move(in);
  }
  // A worker per core, as many as there are files besides the one the loader starts with.
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = std::min(cores, slots_.size() - std::min<std::size_t>(slots_.size(), 1));
  for (std::size_t i = 0; i < n; ++i) workers_.emplace_back([this] { work(); });
}

RuleYamlPool::~RuleYamlPool() {
  stop_ = true;
  for (std::thread& t : workers_) t.join();
}

void RuleYamlPool::parse(Slot& s) {
  try {
    s.node = parse_rule_yaml(s.in.text);
  } catch (...) {
    s.error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.state = 2;
  }
  done_.notify_all();
}

void RuleYamlPool::work() {
  for (std::size_t i = slots_.size(); i-- > 0 && !stop_;) {
    int free = 0;
    if (slots_[i]->state.compare_exchange_strong(free, 1)) parse(*slots_[i]);
  }
}

YAML::Node RuleYamlPool::take(const std::string& key, const std::string& text) {
  for (auto& sp : slots_) {
    Slot& s = *sp;
    if (s.in.key != key || s.in.text != text) continue;
    int free = 0;
    if (s.state.compare_exchange_strong(free, 1)) parse(s);
    {
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [&] { return s.state.load() >= 2; });
      if (s.state.load() == 3) break;  // handed out already: parse again below
      s.state = 3;
    }
    if (s.error) std::rethrow_exception(s.error);
    return std::move(s.node);
  }
  return parse_rule_yaml(text);
}

}  // namespace graphfuse::rules
