// Parsing rule files' YAML for the loader: without their `tests:` sections and comment
// lines, several files at once on other threads.
#pragma once

#include <yaml-cpp/yaml.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace graphfuse::rules {

/// `text` with the lines of its top-level `tests:` block blanked (the key stays, with a
/// null value; every other line keeps its number and column), or `text` itself when there
/// is no such block. A rule file's tests are read by the rule-test runner (graphfuse test),
/// never by the loader, and they are half the text of rules/onnx: yaml-cpp spends ~780
/// instructions a byte scanning them. The block is the `tests:` line (nothing after the
/// colon but a comment) and the lines after it that are empty, indented, comments, or
/// `- ` entries at column 0, up to the next top-level key or document marker.
std::string without_tests(const std::string& text);

/// `text` with its whole-line comments blanked (a third of rules/onnx's text, scanned as
/// slowly), except lines inside a block scalar (deeper than the line that opened it) and
/// everything after a quoted scalar that goes on past its line (where a '#' line would be
/// its text) or a block scalar that keeps trailing blank lines (`|+`). Line numbers and
/// columns stay.
std::string without_comment_lines(const std::string& text);

/// YAML::Load of a rule file, its tests and comment lines left out. When the shortened text
/// does not parse, the whole text is parsed, so a syntax error is reported as it is in the
/// file.
YAML::Node parse_rule_yaml(const std::string& text);

/// Rule files parsed ahead by worker threads (one per core), from the last file back, while
/// the loader takes them in order and compiles their rules; a file no worker has reached
/// yet is parsed by the caller. The trees (or the parse errors) are exactly what
/// parse_rule_yaml gives on one thread.
class RuleYamlPool {
 public:
  struct Input {
    std::string key;   ///< the loader's canonical path
    std::string text;  ///< the file's text
  };
  explicit RuleYamlPool(std::vector<Input> inputs);
  ~RuleYamlPool();
  RuleYamlPool(const RuleYamlPool&) = delete;
  RuleYamlPool& operator=(const RuleYamlPool&) = delete;

  /// The tree of the file `key` if it is in the pool with this very text (rethrowing its
  /// parse error), else parse_rule_yaml(text). Each pooled file is handed out once.
  YAML::Node take(const std::string& key, const std::string& text);

 private:
  struct Slot {
    Input in;
    std::atomic<int> state{0};  ///< 0 free, 1 being parsed, 2 parsed, 3 handed out
    YAML::Node node;
    std::exception_ptr error;
  };
  void parse(Slot& s);
  void work();

  std::vector<std::unique_ptr<Slot>> slots_;
  std::mutex mu_;
  std::condition_variable done_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

}  // namespace graphfuse::rules
