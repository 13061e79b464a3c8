// Reading rule-test cases out of YAML files, and rewriting `expect` blocks in place.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::testing {

/// A YAML scalar with where it sits in its file.
struct ScalarAt {
  std::string text;
  int line = 0;       ///< 1-based line of the scalar's start (the `|` for block scalars)
  int column = 0;     ///< 1-based column of the scalar's start
  int key_column = 0; ///< 1-based column of its key
  bool present = false;
};

struct RuleTestCase {
  std::string name;
  int line = 0;  ///< 1-based line of the case in its file
  ScalarAt input;
  ScalarAt expect;        ///< a graph, or "unchanged"
  ScalarAt expect_error;  ///< substring of the error the run must produce
  /// `rules:` of the case: run only these; nullopt = every rule of the file; empty = none.
  std::optional<std::vector<std::string>> only_rules;
  std::optional<int> max_rounds;
  std::optional<int> threads;
  bool verify = false;
  /// Model-sized expectations, instead of (or beside) a whole graph: how many nodes of
  /// each op the result holds, how often each rule applied, and ops whose nodes must come
  /// out exactly as they went in. In the order written.
  std::vector<std::pair<std::string, std::int64_t>> expect_counts;
  std::vector<std::pair<std::string, std::int64_t>> expect_applied;
  std::vector<std::string> expect_unchanged_ops;
  /// `compare_weights: false`: constants are compared by dtype and shape, not data (and
  /// --update writes them shape-only), so a model's expectation stays small.
  bool compare_weights = true;
  /// A value of the wrong kind (`max_rounds: many`), at its position: the case fails with
  /// this message while the file's other cases still run; `check` reports it too.
  std::vector<Error> malformed;
};

struct RuleTestFile {
  std::string path;
  std::shared_ptr<const std::vector<std::string>> lines;  ///< the file's lines
  std::vector<std::string> rule_files;  ///< the file itself when it has rules:, plus load:
  std::vector<RuleTestCase> cases;
};

/// Reads a file's `tests:` section; nullopt when the file has none. Throws Error with
/// file:line:column on a malformed case.
std::optional<RuleTestFile> read_rule_test_file(const std::string& path);

/// Loads a case's `input` or `expect` graph: a path (relative to the test file) when the
/// scalar is one line naming a graph file, else inline `.graph` text. Errors point at the
/// line and column inside the test file.
Graph load_case_graph(const RuleTestFile& file, const ScalarAt& s);

/// True when `s` is one line naming a graph file (else it is inline `.graph` text).
bool names_graph_file(const std::string& s);

/// One replacement of an `expect` value by new .graph text, or (`path` set) by the name
/// of a file holding it.
struct ExpectUpdate {
  ScalarAt expect;
  std::string graph_text;
  std::string path;
};

/// Returns the file's text with each `expect` value replaced by a block scalar holding
/// the new graph text (or by the file name, for updates with a path); every other byte
/// stays as it was.
std::string apply_expect_updates(const RuleTestFile& file, std::vector<ExpectUpdate> updates);

}  // namespace graphfuse::testing
