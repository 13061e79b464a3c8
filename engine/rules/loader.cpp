// Rule-file loader: YAML (yaml-cpp) -> validated, compiled Rules with file positions;
// top-level keys, includes (each file once, cycles are errors) and shared helpers.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "graphfuse/error_list.h"
#include "rules/builder.h"
#include "rules/rule_yaml.h"
#include "rules/suggest.h"

namespace graphfuse {

namespace fs = std::filesystem;

void RuleSetBuilder::fail(const File& f, const YAML::Mark& m, const std::string& msg) const {
  std::string line;
  if (m.line >= 0 && static_cast<std::size_t>(m.line) < f.lines->size()) line = (*f.lines)[m.line];
  throw Error(loc(f, m), msg, line);
}

// Where a scalar's text starts in the file. yaml-cpp marks a block scalar at its `|`
// or `>` indicator; its content starts on the next line, indented like the first
// non-empty content line (the YAML indentation is stripped from every line).
dsl::TextOrigin RuleSetBuilder::origin(const File& f, const YAML::Node& n) const {
  dsl::TextOrigin o;
  o.file = f.path;
  o.file_lines = f.lines;
  const YAML::Mark m = n.Mark();
  const std::string& at = (*f.lines)[static_cast<std::size_t>(m.line)];
  char c = static_cast<std::size_t>(m.column) < at.size() ? at[static_cast<std::size_t>(m.column)] : ' ';
  if (c == '|' || c == '>') {
    o.first_line = m.line + 2;
    const std::string& text = n.Scalar();
    std::istringstream in(text);
    std::string tl;
    for (int j = 0; std::getline(in, tl); ++j) {
      if (tl.find_first_not_of(' ') == std::string::npos) continue;
      std::size_t fl = static_cast<std::size_t>(o.first_line - 1 + j);
      if (fl >= f.lines->size()) break;
      const std::string& file_line = (*f.lines)[fl];
      std::size_t file_indent = file_line.find_first_not_of(' ');
      std::size_t text_indent = tl.find_first_not_of(' ');
      if (file_indent != std::string::npos && file_indent >= text_indent)
        o.indent_column = static_cast<int>(file_indent - text_indent) + 1;
      break;
    }
    o.first_column = o.indent_column;
  } else {
    o.first_line = m.line + 1;
    o.first_column = m.column + 1 + ((c == '"' || c == '\'') ? 1 : 0);
    o.indent_column = o.first_column;  // folded continuation lines: best effort
  }
  return o;
}

void RuleSetBuilder::check_unique_keys(const File& f, const YAML::Node& map) const {
  std::map<std::string, YAML::Mark> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) fail(f, it->first.Mark(), "keys must be plain names");
    auto [pos, fresh] = seen.emplace(it->first.Scalar(), it->first.Mark());
    if (!fresh)
      fail(f, it->first.Mark(), "duplicate key '" + it->first.Scalar() + "' (first at line " +
                                    std::to_string(pos->second.line + 1) + ")");
  }
}

void RuleSetBuilder::check_keys(const File& f, const YAML::Node& map, const std::vector<std::string>& allowed,
                                const std::string& what, const std::string& where) const {
  check_unique_keys(f, map);
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string& k = it->first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string list;
    for (std::size_t i = 0; i < allowed.size(); ++i)
      list += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + allowed[i];
    fail(f, it->first.Mark(), "unknown " + what + " '" + k + "'" + where + " (expected " + list + ")" +
                                  rules::did_you_mean(k, allowed));
  }
}

std::string RuleSetBuilder::scalar(const File& f, const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(f, n.Mark(), "'" + key + "' must be a string");
  return n.Scalar();
}

int RuleSetBuilder::integer(const File& f, const YAML::Node& n, const std::string& key) const {
  try {
    return n.as<int>();
  } catch (const YAML::Exception&) {
    fail(f, n.Mark(), "'" + key + "' must be an integer");
  }
}

void RuleSetBuilder::include(File& f, const YAML::Node& list, const std::vector<std::string>& stack) {
  if (!list.IsSequence()) fail(f, list.Mark(), "`include:` must be a list of rule files");
  fs::path dir = fs::path(f.path).parent_path();
  for (const YAML::Node& item : list) {
    std::string rel = scalar(f, item, "include");
    fs::path p = (dir / rel).lexically_normal();
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(p, ec);
    std::string key = ec ? p.string() : canon.string();
    if (std::find(stack.begin(), stack.end(), key) != stack.end()) {
      std::string chain;
      bool on = false;
      for (const std::string& s : stack) {
        on = on || s == key;
        if (on) chain += fs::path(s).filename().string() + " -> ";
      }
      fail(f, item.Mark(), "include cycle: " + chain + fs::path(key).filename().string());
    }
    if (auto done = included_.find(key); done != included_.end()) {
      merge_ops(f, done->second, item.Mark());
      continue;
    }
    std::ifstream in(p, std::ios::binary);
    if (!in) fail(f, item.Mark(), "cannot read included rule file '" + p.string() + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    std::vector<std::string> deeper = stack;
    deeper.push_back(key);
    rules::OpSchemas ops = load(p.string(), ss.str(), deeper);
    included_[key] = ops;
    merge_ops(f, ops, item.Mark());
  }
}

rules::OpSchemas RuleSetBuilder::load(const std::string& path, std::string text, const std::vector<std::string>& stack) {
  File f{path, dsl::split_lines(text), {}};
  YAML::Node root;
  try {
    // The tests are the rule-test runner's (rule_yaml.h); the pool may have parsed it already.
    root = yaml_pool_ ? yaml_pool_->take(stack.back(), text) : rules::parse_rule_yaml(text);
  } catch (const YAML::ParserException& e) {
    fail(f, e.mark, e.msg);
  }
  if (!root.IsMap()) fail(f, root.IsDefined() && !root.IsNull() ? root.Mark() : YAML::Mark{},
                          "a rule file is a mapping with a `rules:` list");
  check_keys(f, root, {"rules", "include", "ops", "tests", "load"}, "top-level key", "");
  if (!root["rules"]) fail(f, root.Mark(), "a rule file needs a `rules:` list");
  // Included files first (their rules come before this file's), then this file's own
  // ops, so its rules see both whatever the order of the keys.
  if (const YAML::Node inc = root["include"]) include(f, inc, stack);
  if (const YAML::Node ops = root["ops"]) read_ops(f, ops);
  RuleFileInfo info{path, std::move(text), 0};
  if (const YAML::Node tests = root["tests"]) {
    // Run later by the rule-test runner; find the key's own line for it.
    for (auto it = root.begin(); it != root.end(); ++it)
      if (it->first.Scalar() == "tests") info.tests_line = it->first.Mark().line + 1;
  }
  const YAML::Node list = root["rules"];
  if (!list.IsSequence() && !list.IsNull()) fail(f, list.Mark(), "`rules:` must be a list of rules");
  for (std::size_t i = 0; i < list.size(); ++i) {
    try {
      add_rule(f, list[i]);
    } catch (const Error& e) {
      errors_.push_back(e);  // the rule is left out; the next one is still checked
    }
  }
  set_.files_.push_back(std::move(info));
  return f.ops;
}

void RuleSetBuilder::add_file(const std::string& path, std::string text) {
  std::error_code ec;
  fs::path canon = fs::weakly_canonical(path, ec);
  std::string key = ec ? path : canon.string();
  // Already loaded as another file's include (a folder holding both, `--rules rules/onnx`):
  // each file is loaded once per load, whichever way it was named first.
  if (included_.count(key)) return;
  try {
    rules::OpSchemas ops = load(path, std::move(text), {key});
    included_.emplace(key, std::move(ops));
  } catch (const Error& e) {
    // A file-level error (malformed YAML, a bad include) ends the load; the broken rules
    // found before it are reported with it.
    if (errors_.empty()) throw;
    errors_.push_back(e);
    throw ErrorList(std::move(errors_));
  }
}

RuleSet RuleSetBuilder::finish() {
  if (!errors_.empty()) throw ErrorList(std::move(errors_));
  std::stable_sort(set_.rules_.begin(), set_.rules_.end(),
                   [](const Rule& a, const Rule& b) { return a.priority > b.priority; });
  set_.freeze_();
  return std::move(set_);
}

RuleSet RuleSetBuilder::assemble(std::vector<Rule> rules, std::vector<RuleFileInfo> files) {
  RuleSet set;
  set.rules_ = std::move(rules);
  set.files_ = std::move(files);
  set.freeze_();
  return set;
}

// A directory stands for every *.yaml file under it, in path order, so that
// `--rules rules/onnx` loads the whole library the same way on every machine.
std::vector<std::string> rules::expand_rule_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && it->path().extension() == ".yaml") found.push_back(it->path().string());
    if (ec) throw Error(SourceLoc{p}, "cannot list rule directory: " + ec.message());
    if (found.empty()) throw Error(SourceLoc{p}, "rule directory holds no .yaml file");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

RuleSet load_rule_files(const std::vector<std::string>& paths) {
  const std::vector<std::string> files = rules::expand_rule_paths(paths);
  std::vector<std::optional<std::string>> texts;  // nullopt: unreadable, reported in its turn
  std::vector<rules::RuleYamlPool::Input> inputs;
  for (const std::string& p : files) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      texts.emplace_back();
      continue;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    texts.emplace_back(ss.str());
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(p, ec);
    inputs.push_back({ec ? p : canon.string(), *texts.back()});
  }
  // YAML parsing is most of a rule library's load time (rules/onnx without its tests: 75
  // of 124 million instructions); a second thread parses files ahead while this one
  // compiles rules.
  rules::RuleYamlPool pool(std::move(inputs));
  RuleSetBuilder b;
  b.use_yaml_pool(&pool);
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!texts[i]) throw Error(SourceLoc{files[i]}, "cannot read rule file");
    b.add_file(files[i], std::move(*texts[i]));
  }
  return b.finish();
}

RuleSet load_rules_from_string(std::string_view yaml, const std::string& file) {
  RuleSetBuilder b;
  b.add_file(file, std::string(yaml));
  return b.finish();
}

}  // namespace graphfuse
