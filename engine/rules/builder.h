// The rule-file loader's builder: files, includes, op schemas and rule entries -> RuleSet.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dsl/parser.h"
#include "graphfuse/rules.h"
#include "rules/compile.h"
#include "rules/rule_yaml.h"

namespace graphfuse {

namespace rules {
/// The rule files `paths` stand for: a directory, every *.yaml file under it (sorted by path).
std::vector<std::string> expand_rule_paths(const std::vector<std::string>& paths);
}  // namespace rules

/// Builds RuleSets (the only code allowed to fill one before it is frozen).
class RuleSetBuilder {
 public:
  RuleSetBuilder() = default;

  /// Loads a file given by the caller (always loaded, even if seen before, so a file
  /// listed twice reports its rules as duplicates).
  void add_file(const std::string& path, std::string text);
  /// Files parsed ahead (rule_yaml.h); it must outlive the add_file calls.
  void use_yaml_pool(rules::RuleYamlPool* pool) { yaml_pool_ = pool; }
  /// Orders rules by priority (stable) and freezes the set.
  RuleSet finish();
  /// The set of rules a builder finished before, read back from the rule cache
  /// (rule_cache.h): already in priority order.
  static RuleSet assemble(std::vector<Rule> rules, std::vector<RuleFileInfo> files);

  /// A file being loaded: its lines for error display and the ops its rules see.
  struct File {
    std::string path;
    std::shared_ptr<const std::vector<std::string>> lines;
    rules::OpSchemas ops;
  };

 private:
  [[noreturn]] void fail(const File& f, const YAML::Mark& m, const std::string& msg) const;
  SourceLoc loc(const File& f, const YAML::Mark& m) const {
    return SourceLoc{f.path, m.line + 1, m.column + 1};
  }
  dsl::TextOrigin origin(const File& f, const YAML::Node& scalar) const;
  void check_unique_keys(const File& f, const YAML::Node& map) const;
  /// Unique keys, each one of `allowed`; else "unknown <what> 'k'<where> (expected ...)".
  void check_keys(const File& f, const YAML::Node& map, const std::vector<std::string>& allowed,
                  const std::string& what, const std::string& where) const;
  std::string scalar(const File& f, const YAML::Node& n, const std::string& key) const;
  int integer(const File& f, const YAML::Node& n, const std::string& key) const;

  // loader.cpp: a file and its includes.
  rules::OpSchemas load(const std::string& path, std::string text, const std::vector<std::string>& stack);
  void include(File& f, const YAML::Node& list, const std::vector<std::string>& stack);
  // ops_schema.cpp: the `ops:` section.
  void read_ops(File& f, const YAML::Node& ops);
  void merge_ops(File& f, const rules::OpSchemas& from, const YAML::Mark& at);
  // rule_entry.cpp: one rule.
  void add_rule(const File& f, const YAML::Node& item);
  std::vector<rules::WhereItem> read_where(const File& f, const YAML::Node& where) const;

  /// Errors of single rules, kept so that one broken rule does not hide the next; finish()
  /// throws them together.
  std::vector<Error> errors_;
  RuleSet set_;
  std::map<std::string, SourceLoc> names_;  // rule name -> where its name was written
  std::map<std::string, rules::OpSchemas> included_;  // canonical path -> its ops, loaded once
  rules::RuleYamlPool* yaml_pool_ = nullptr;
};

}  // namespace graphfuse
