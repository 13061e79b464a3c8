// `graphfuse check FILE...`: parse and compile rule files without a graph.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "graphfuse/error_list.h"
#include "graphfuse/rules.h"
#include "graphfuse/target.h"
#include "match/program.h"
#include "target/rule_check.h"
#include "testing/rule_test_file.h"

namespace graphfuse::cli {

namespace {

struct CheckOptions {
  std::vector<std::string> files;
  bool programs = false;
  std::string target;  ///< --target: static analysis against a target profile
};

// Warnings, one per finding, with the rule's position, then a summary line.
void report_target(const std::string& path, const RuleSet& rules, const TargetProfile& t) {
  std::vector<target::Finding> found = target::check_rules(rules, t);
  std::size_t counts[4] = {0, 0, 0, 0};
  for (const target::Finding& f : found) {
    ++counts[static_cast<int>(f.kind)];
    std::cout << f.loc.str() << ": warning: rule " << f.rule << " [" << target::finding_kind_name(f.kind)
              << "]: " << f.message << "\n";
  }
  std::cout << path << " on " << t.name << ": " << rules.size() << " rules, " << counts[0] << " unusable, " << counts[1]
            << " partly usable, " << counts[2] << " shadowed, " << counts[3] << " pairs that undo each other\n";
}

// The rule files to load for `path`: the file itself, or, for a rule-test file without
// rules of its own (`load:` + `tests:`), the files it loads, together.
std::vector<std::string> rule_files_of(const std::string& path) {
  // A directory of rule files is expanded by the loader itself.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return {path};
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root.IsMap() && !root["rules"] && root["load"] && root["load"].IsSequence()) {
      std::vector<std::string> files;
      std::filesystem::path dir = std::filesystem::path(path).parent_path();
      for (const YAML::Node& f : root["load"]) files.push_back((dir / f.as<std::string>()).lexically_normal().string());
      return files;
    }
  } catch (const YAML::Exception&) {
    // The loader reports malformed YAML with its position.
  }
  return {path};
}

// A target profile (a file with a top-level `target:` key) is checked as --target would
// read it: "PATH: target NAME, N ops, ok" or its error with file:line:column.
bool check_profile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || !is_target_profile_text(text.str())) return false;
  TargetProfile t = load_target_from_string(text.str(), path);
  std::cout << path << ": target " << t.name << ", " << t.ops.size() << (t.ops.size() == 1 ? " op" : " ops") << ", ok\n";
  return true;
}

// Each file loads on its own (with its includes), so one broken file does not hide
// the errors of the next.
int run_check(const CheckOptions& o) {
  int failed = 0;
  std::optional<TargetProfile> target;
  if (!o.target.empty()) target = load_target(o.target);
  for (const std::string& path : o.files) {
    try {
      if (check_profile(path)) continue;
      // A rule-test file's cases are read as `test` reads them, so what `test` would refuse
      // (`max_rounds: many`, a case without a name) is an error here too. Malformed YAML is
      // left to the rule loader, which reports it as it always has.
      std::error_code ec;
      std::optional<testing::RuleTestFile> tests;
      std::optional<Error> tests_error;
      if (!std::filesystem::is_directory(path, ec)) try {
          tests = testing::read_rule_test_file(path);
        } catch (const Error& e) {
          tests_error = e;
        }
      std::vector<Error> case_errors;
      if (tests)
        for (const auto& tc : tests->cases) case_errors.insert(case_errors.end(), tc.malformed.begin(), tc.malformed.end());
      RuleSet rules = load_rule_files(rule_files_of(path));
      if (tests_error) throw *tests_error;
      if (!case_errors.empty()) {
        for (const Error& e : case_errors) std::cerr << e.pretty() << "\n";
        ++failed;
        continue;
      }
      std::size_t disabled = rules.size() - rules.enabled().size();
      std::cout << path << ": " << rules.size() << (rules.size() == 1 ? " rule" : " rules");
      if (disabled) std::cout << " (" << disabled << " disabled)";
      std::cout << ", ok\n";
      if (target) report_target(path, rules, *target);
      if (!o.programs) continue;
      for (const Rule& r : rules.rules())
        std::cout << "\n" << r.label() << "\n" << match::disassemble(r.compiled->match);
    } catch (const Error& e) {
      std::vector<Error> errors = all_errors(e);
      for (const Error& each : errors) std::cerr << each.pretty() << "\n";
      if (errors.size() > 1) std::cerr << path << ": " << errors.size() << " errors\n";
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

void register_check(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and compile rule files (no graph needed); report errors with positions");
  cmd->add_option("FILES", opt->files, "Rule files (a rule-test file checks the rule files it loads)")->required();
  cmd->add_flag("--programs", opt->programs, "Also print each rule's compiled match program");
  cmd->add_option("--target", opt->target,
                  "Also check the rules against a target profile (name or file): rules that can never fire there, "
                  "shadowed rules, rule pairs that undo each other (warnings)");
  cmd->callback([opt, &run] { run = [opt] { return run_check(*opt); }; });
}

}  // namespace graphfuse::cli
