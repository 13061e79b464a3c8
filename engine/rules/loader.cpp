// Rule-file loader: YAML (yaml-cpp) -> validated, compiled Rules with file positions.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "dsl/parser.h"
#include "graphfuse/rules.h"
#include "match/program.h"
#include "rules/compile.h"

namespace graphfuse {

/// Builds RuleSets (the only code allowed to fill one before it is frozen).
class RuleSetBuilder {
 public:
  RuleSetBuilder() = default;

  void add_file(const std::string& path, std::string text);
  RuleSet finish() {
    set_.freeze_();
    return std::move(set_);
  }

 private:
  struct File {
    std::string path;
    std::shared_ptr<const std::vector<std::string>> lines;
  };

  [[noreturn]] void fail(const File& f, const YAML::Mark& m, const std::string& msg) const;
  SourceLoc loc(const File& f, const YAML::Mark& m) const {
    return SourceLoc{f.path, m.line + 1, m.column + 1};
  }
  dsl::TextOrigin origin(const File& f, const YAML::Node& scalar) const;
  void check_unique_keys(const File& f, const YAML::Node& map) const;
  std::string scalar(const File& f, const YAML::Node& n, const std::string& key) const;
  void add_rule(const File& f, const YAML::Node& item);

  RuleSet set_;
  std::map<std::string, SourceLoc> names_;  // rule name -> where its name was written
};

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

std::string RuleSetBuilder::scalar(const File& f, const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(f, n.Mark(), "'" + key + "' must be a string");
  return n.Scalar();
}

static bool valid_rule_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

void RuleSetBuilder::add_rule(const File& f, const YAML::Node& item) {
  if (!item.IsMap()) fail(f, item.Mark(), "each rule must be a mapping with name, pattern and rewrite");
  check_unique_keys(f, item);
  static const char* kKeys[] = {"name", "doc", "pattern", "rewrite", "benefit", "enabled"};
  for (auto it = item.begin(); it != item.end(); ++it) {
    const std::string& k = it->first.Scalar();
    if (std::find(std::begin(kKeys), std::end(kKeys), k) == std::end(kKeys))
      fail(f, it->first.Mark(), "unknown key '" + k + "' in rule (expected name, doc, pattern, rewrite, benefit, enabled)");
  }
  for (const char* required : {"name", "pattern", "rewrite"})
    if (!item[required]) fail(f, item.Mark(), std::string("rule is missing '") + required + "'");

  Rule r;
  r.loc = loc(f, item.Mark());
  const YAML::Node name = item["name"];
  r.name = scalar(f, name, "name");
  if (!valid_rule_name(r.name))
    fail(f, name.Mark(), "rule name '" + r.name + "' must be letters, digits, '_', '.' or '-', starting with a letter");
  if (auto prev = names_.find(r.name); prev != names_.end())
    fail(f, name.Mark(), "duplicate rule name '" + r.name + "' (first defined at " + prev->second.str() + ")");
  names_.emplace(r.name, loc(f, name.Mark()));
  if (item["doc"]) r.doc = scalar(f, item["doc"], "doc");
  if (const YAML::Node b = item["benefit"]) {
    try {
      r.benefit = b.as<int>();
    } catch (const YAML::Exception&) {
      fail(f, b.Mark(), "'benefit' must be an integer");
    }
  }
  if (const YAML::Node e = item["enabled"]) {
    try {
      r.enabled = e.as<bool>();
    } catch (const YAML::Exception&) {
      fail(f, e.Mark(), "'enabled' must be true or false");
    }
  }
  const YAML::Node pat = item["pattern"], rw = item["rewrite"];
  r.pattern = scalar(f, pat, "pattern");
  r.rewrite = scalar(f, rw, "rewrite");
  dsl::TextOrigin pat_origin = origin(f, pat), rw_origin = origin(f, rw);
  r.pattern_loc = pat_origin.map({1, 1});
  r.rewrite_loc = rw_origin.map({1, 1});
  rules::CompiledPattern cp = rules::compile_pattern(dsl::parse_program(r.pattern, pat_origin), pat_origin);
  auto compiled = std::make_shared<match::CompiledRule>();
  compiled->rewrite = rules::compile_rewrite(dsl::parse_program(r.rewrite, rw_origin), cp, rw_origin);
  compiled->match = std::move(cp.program);
  r.root_ops = std::move(cp.root_ops);
  r.depth = cp.depth;
  r.compiled = std::move(compiled);
  set_.rules_.push_back(std::move(r));
}

void RuleSetBuilder::add_file(const std::string& path, std::string text) {
  File f{path, dsl::split_lines(text)};
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(f, e.mark, e.msg);
  }
  if (!root.IsMap()) fail(f, root.IsDefined() && !root.IsNull() ? root.Mark() : YAML::Mark{},
                          "a rule file is a mapping with a `rules:` list");
  check_unique_keys(f, root);
  RuleFileInfo info{path, std::move(text), 0};
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& k = it->first.Scalar();
    if (k == "rules") {
      const YAML::Node list = it->second;
      if (!list.IsSequence() && !list.IsNull()) fail(f, list.Mark(), "`rules:` must be a list of rules");
      for (std::size_t i = 0; i < list.size(); ++i) add_rule(f, list[i]);
    } else if (k == "tests") {
      info.tests_line = it->first.Mark().line + 1;  // run later by the rule-test runner
    } else if (k == "load") {
      continue;  // rule-test files name the rule files their cases need; not ours
    } else {
      fail(f, it->first.Mark(), "unknown top-level key '" + k + "' (expected rules, tests or load)");
    }
  }
  if (!root["rules"]) fail(f, root.Mark(), "a rule file needs a `rules:` list");
  set_.files_.push_back(std::move(info));
}

RuleSet load_rule_files(const std::vector<std::string>& paths) {
  RuleSetBuilder b;
  for (const std::string& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw Error(SourceLoc{p}, "cannot read rule file");
    std::ostringstream ss;
    ss << in.rdbuf();
    b.add_file(p, ss.str());
  }
  return b.finish();
}

RuleSet load_rules_from_string(std::string_view yaml, const std::string& file) {
  RuleSetBuilder b;
  b.add_file(file, std::string(yaml));
  return b.finish();
}

}  // namespace graphfuse
