// Rule-test YAML files: reading cases with positions, and in-place `expect` updates.
#include "rule_test_file.h"

#include <algorithm>
#include <filesystem>

#include "dsl/parser.h"
#include "graphfuse/io.h"
#include "rules/suggest.h"

namespace graphfuse::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInlineFile = "<inline graph>";

const std::vector<std::string> kCaseKeys = {
    "name", "doc", "input", "expect", "expect_error", "expect_counts", "expect_applied", "expect_unchanged_ops",
    "compare_weights", "rules", "max_rounds", "threads", "verify"};

Error at(const RuleTestFile& f, const YAML::Mark& m, const std::string& msg) {
  SourceLoc loc{f.path, m.line + 1, m.column + 1};
  std::string line = (m.line >= 0 && static_cast<std::size_t>(m.line) < f.lines->size()) ? (*f.lines)[m.line] : "";
  return Error(loc, msg, line);
}

ScalarAt scalar_at(const RuleTestFile& f, const YAML::Node& key, const YAML::Node& value, const char* what) {
  if (!value.IsScalar()) throw at(f, value.Mark(), std::string("'") + what + "' must be a string");
  ScalarAt s;
  s.text = value.Scalar();
  s.line = value.Mark().line + 1;
  s.column = value.Mark().column + 1;
  s.key_column = key.Mark().column + 1;
  s.present = true;
  return s;
}

// A scalar of the kind the key needs, or an Error at the value: yaml-cpp's own
// conversion failure names neither the file nor the key ("bad conversion").
std::string string_at(const RuleTestFile& f, const YAML::Node& v, const std::string& what) {
  if (!v.IsScalar()) throw at(f, v.Mark(), what + " must be a string");
  return v.Scalar();
}

int int_at(const RuleTestFile& f, const YAML::Node& v, const char* key, int min) {
  int out = 0;
  if (!v.IsScalar() || !YAML::convert<int>::decode(v, out) || out < min)
    throw at(f, v.Mark(), std::string("'") + key + "' must be an integer >= " + std::to_string(min) + ", not '" +
                              (v.IsScalar() ? v.Scalar() : std::string(v.IsSequence() ? "a list" : "a mapping")) + "'");
  return out;
}

bool bool_at(const RuleTestFile& f, const YAML::Node& v, const char* key) {
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
    throw at(f, v.Mark(), std::string("'") + key + "' must be true or false");
  return out;
}

bool is_block_scalar(const RuleTestFile& f, const ScalarAt& s) {
  if (s.line < 1 || static_cast<std::size_t>(s.line) > f.lines->size()) return false;
  const std::string& l = (*f.lines)[s.line - 1];
  std::size_t c = static_cast<std::size_t>(s.column - 1);
  return c < l.size() && (l[c] == '|' || l[c] == '>');
}

int indent_of(const std::string& line) {
  return static_cast<int>(line.find_first_not_of(' ') == std::string::npos ? line.size()
                                                                            : line.find_first_not_of(' '));
}

// `{Op: 3, Other: 0}` in the order written.
std::vector<std::pair<std::string, std::int64_t>> counts_at(const RuleTestFile& f, const YAML::Node& v,
                                                             const char* key) {
  if (!v.IsMap()) throw at(f, v.Mark(), std::string("'") + key + "' maps names to counts, e.g. `{Conv: 0, FusedConv: 26}`");
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& kv : v) out.emplace_back(string_at(f, kv.first, std::string("a name in '") + key + "'"),
                                            int_at(f, kv.second, key, 0));
  return out;
}

}  // namespace

bool names_graph_file(const std::string& s) {
  if (s.find('\n') != std::string::npos || s.find('(') != std::string::npos) return false;
  for (const char* ext : {".graph", ".yaml", ".yml", ".json", ".onnx"})
    if (s.size() > std::string_view(ext).size() && s.ends_with(ext)) return true;
  return false;
}

namespace {
std::optional<RuleTestFile> read_cases(const std::string& path);
}

std::optional<RuleTestFile> read_rule_test_file(const std::string& path) {
  try {
    return read_cases(path);
  } catch (const YAML::Exception& e) {
    // Anything yaml-cpp still throws gets the file and position, never a bare message.
    RuleTestFile f;
    f.path = path;
    f.lines = dsl::split_lines(read_file(path));
    throw at(f, e.mark, e.msg);
  }
}

namespace {
std::optional<RuleTestFile> read_cases(const std::string& path) {
  RuleTestFile f;
  f.path = path;
  f.lines = dsl::split_lines(read_file(path));
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw at(f, e.mark, e.msg);
  }
  if (!root.IsMap() || !root["tests"]) return std::nullopt;
  fs::path dir = fs::path(path).parent_path();
  if (root["rules"]) f.rule_files.push_back(path);
  if (YAML::Node load = root["load"]) {
    if (!load.IsSequence()) throw at(f, load.Mark(), "'load' must be a list of rule files");
    for (const auto& p : load)
      f.rule_files.push_back((dir / string_at(f, p, "a 'load' entry")).lexically_normal().string());
  }
  YAML::Node tests = root["tests"];
  if (!tests.IsSequence()) throw at(f, tests.Mark(), "'tests' must be a list of cases");
  for (const YAML::Node& c : tests) {
    if (!c.IsMap()) throw at(f, c.Mark(), "a test case must be a mapping with name, input and expect");
    RuleTestCase tc;
    tc.line = c.Mark().line + 1;
    for (const auto& kv : c) {
      std::string key = string_at(f, kv.first, "a test case key");
      const YAML::Node& v = kv.second;
      if (key == "name") tc.name = string_at(f, v, "'name'");
      else if (key == "doc") continue;
      else if (key == "input") tc.input = scalar_at(f, kv.first, v, "input");
      else if (key == "expect") tc.expect = scalar_at(f, kv.first, v, "expect");
      else if (key == "expect_error") tc.expect_error = scalar_at(f, kv.first, v, "expect_error");
      else if (key == "rules") {
        if (!v.IsSequence()) throw at(f, v.Mark(), "'rules' must be a list of rule names");
        tc.only_rules.emplace();
        for (const auto& r : v) tc.only_rules->push_back(string_at(f, r, "a rule name"));
      } else if (key == "max_rounds" || key == "threads" || key == "verify" || key == "compare_weights" ||
                 key == "expect_counts" || key == "expect_applied" || key == "expect_unchanged_ops") {
        // A badly typed option fails its own case only; the file's other cases still run.
        try {
          if (key == "max_rounds") tc.max_rounds = int_at(f, v, "max_rounds", 1);
          else if (key == "threads") tc.threads = int_at(f, v, "threads", 0);
          else if (key == "verify") tc.verify = bool_at(f, v, "verify");
          else if (key == "compare_weights") tc.compare_weights = bool_at(f, v, "compare_weights");
          else if (key == "expect_counts") tc.expect_counts = counts_at(f, v, "expect_counts");
          else if (key == "expect_applied") tc.expect_applied = counts_at(f, v, "expect_applied");
          else {
            if (!v.IsSequence()) throw at(f, v.Mark(), "'expect_unchanged_ops' must be a list of op names");
            for (const auto& op : v) tc.expect_unchanged_ops.push_back(string_at(f, op, "an op name"));
          }
        } catch (const Error& e) {
          tc.malformed.push_back(e);
        }
      } else
        throw at(f, kv.first.Mark(), "unknown test case key '" + key +
                                         "' (expected name, doc, input, expect, expect_error, expect_counts, "
                                         "expect_applied, expect_unchanged_ops, compare_weights, rules, "
                                         "max_rounds, threads, verify)" +
                                         rules::did_you_mean(key, kCaseKeys));
    }
    if (tc.name.empty()) throw at(f, c.Mark(), "test case without a name");
    if (!tc.input.present) throw at(f, c.Mark(), "test case '" + tc.name + "' has no input");
    const bool counts = !tc.expect_counts.empty() || !tc.expect_applied.empty() || !tc.expect_unchanged_ops.empty();
    if (tc.expect_error.present ? tc.expect.present || counts : !tc.expect.present && !counts)
      throw at(f, c.Mark(), "test case '" + tc.name +
                                "' needs expect (and/or expect_counts, expect_applied, expect_unchanged_ops) "
                                "or expect_error alone");
    f.cases.push_back(std::move(tc));
  }
  return f;
}
}  // namespace

Graph load_case_graph(const RuleTestFile& file, const ScalarAt& s) {
  if (names_graph_file(s.text))
    return load_graph((fs::path(file.path).parent_path() / s.text).lexically_normal().string());
  if (is_block_scalar(file, s)) {
    // A `|` block is parsed where it stands: blank lines above it and its indentation
    // put back, so nodes (and errors) carry the test file's own line:column, which
    // verify's messages and explanations then quote.
    int content = std::min<int>(s.line + 1, static_cast<int>(file.lines->size()));
    std::string pad(static_cast<std::size_t>(indent_of((*file.lines)[content - 1])), ' ');
    std::string text(static_cast<std::size_t>(s.line), '\n');
    std::size_t pos = 0;
    while (pos < s.text.size()) {
      std::size_t nl = s.text.find('\n', pos);
      std::size_t end = nl == std::string::npos ? s.text.size() : nl;
      if (end > pos) text += pad;
      text.append(s.text, pos, end - pos);
      text += '\n';
      pos = end + 1;
    }
    return parse_graph_text(text, file.path);
  }
  try {
    return parse_graph_text(s.text, kInlineFile);
  } catch (const Error& e) {
    if (e.loc().file != kInlineFile) throw;
    dsl::TextOrigin origin;
    origin.file = file.path;
    origin.file_lines = file.lines;
    origin.first_line = s.line;  // a one-line scalar: its own line and column
    origin.first_column = s.column;
    origin.indent_column = s.column;
    throw origin.error(dsl::Pos{e.loc().line, e.loc().column}, e.message());
  }
}

std::string apply_expect_updates(const RuleTestFile& file, std::vector<ExpectUpdate> updates) {
  std::vector<std::string> lines = *file.lines;
  // Bottom-up, so earlier line numbers stay valid while later blocks change size.
  std::sort(updates.begin(), updates.end(),
            [](const ExpectUpdate& a, const ExpectUpdate& b) { return a.expect.line > b.expect.line; });
  for (const ExpectUpdate& u : updates) {
    int head = u.expect.line - 1;  // 0-based line holding `expect:`
    std::size_t first = head + 1, last = first;  // [first, last): old block content
    if (is_block_scalar(file, u.expect)) {
      int key_indent = u.expect.key_column - 1;
      while (last < lines.size()) {
        const std::string& l = lines[last];
        bool blank = l.find_first_not_of(' ') == std::string::npos;
        if (!blank && indent_of(l) <= key_indent) break;
        ++last;
      }
      while (last > first && lines[last - 1].find_first_not_of(' ') == std::string::npos) --last;
    }
    if (!u.path.empty()) {
      lines[head] = lines[head].substr(0, u.expect.column - 1) + u.path;
      lines.erase(lines.begin() + first, lines.begin() + last);
      continue;
    }
    lines[head] = lines[head].substr(0, u.expect.column - 1) + "|";
    std::string pad(u.expect.key_column - 1 + 2, ' ');
    std::vector<std::string> block;
    std::size_t pos = 0;
    const std::string& t = u.graph_text;
    while (pos < t.size()) {
      std::size_t nl = t.find('\n', pos);
      std::string l = t.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      block.push_back(l.empty() ? l : pad + l);
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    lines.erase(lines.begin() + first, lines.begin() + last);
    lines.insert(lines.begin() + first, block.begin(), block.end());
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace graphfuse::testing
