// Rules and rule sets: YAML rule files loaded, validated and compiled once, then frozen.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/error.h"
#include "graphfuse/graph.h"

namespace graphfuse {

namespace match {
struct CompiledRule;  // the rule's match program and rewrite program (engine/match/program.h)
}

/// One argument of a native predicate or function, as the rule wrote it:
/// `my_check(conv, x, xs, 3)` passes a pattern node, a value, a variadic list, a number.
struct NativeArg {
  NodeId node = kNoNode;          ///< the matched node, when the argument names a pattern node
  ValueRef value;                 ///< a leaf's value, or the named node's output (port 0 or bound port)
  std::vector<ValueRef> values;   ///< a variadic list `xs`
  std::optional<AttrValue> literal;  ///< a literal or computed argument (`3`, `conv.k`)
};

/// A native function: computes an attribute value from a match, or nullopt when it does
/// not apply (a constraint using it then fails; a rewrite using it is not applied). Must
/// only read the graph; it is called concurrently from matching threads.
using NativeFunction = std::function<std::optional<AttrValue>(const Graph&, std::span<const NativeArg>)>;
/// A native predicate: `where: [my_check(conv)]`. Same contract as NativeFunction.
using NativePredicate = std::function<bool(const Graph&, std::span<const NativeArg>)>;

/// Registers a predicate under `name` for rule files (`where: [name(args)]`). Rules are
/// bound to natives when loaded, so register before loading; a rule naming an unknown
/// native is a load error. Registering a name again replaces it for later loads.
void register_predicate(std::string name, NativePredicate fn);
/// Registers a function for constraints (`name(x) == 3`) and rewrite attributes
/// (`{k = name(conv)}`). See register_predicate.
void register_function(std::string name, NativeFunction fn);
/// The native registered as `name` (predicates are functions returning bool), or null.
std::shared_ptr<const NativeFunction> find_native(std::string_view name);

/// One rewrite rule: static data plus its compiled form. Built only by the loader.
struct Rule {
  std::string name;
  std::string doc;
  int benefit = 1;       ///< higher benefit is applied first when matches overlap
  int priority = 0;      ///< rules are ordered by priority (higher first), then file order
  bool enabled = true;   ///< disabled rules are checked and compiled but never applied
  SourceLoc loc;         ///< where the rule's entry starts (file:line:col of `- name:`)
  std::string pattern;   ///< pattern text as written (the YAML scalar's value)
  std::string rewrite;   ///< rewrite template text as written
  SourceLoc pattern_loc; ///< file position of the pattern text's first character
  SourceLoc rewrite_loc; ///< file position of the rewrite text's first character
  /// Ops the pattern's root accepts; empty when the root is a wildcard (`*`).
  std::vector<OpType> root_ops;
  /// How far below a changed node a candidate root can be and still see the change:
  /// the longest chain of pattern nodes from the root down (root alone = 0), plus one
  /// when constraints look at leaves or several roots meet through shared values.
  int depth = 0;
  /// Match program and rewrite program; shared, immutable after loading.
  std::shared_ptr<const match::CompiledRule> compiled;

  /// "file:line name", the way stats, traces and errors name a rule.
  std::string label() const;
};

/// A loaded rule file, kept so later tools (the rule-test runner, `graphfuse check`)
/// can look at parts the rewriter does not use, such as the `tests:` section.
struct RuleFileInfo {
  std::string path;
  std::string text;     ///< the whole file as read
  int tests_line = 0;   ///< 1-based line of the top-level `tests:` key; 0 when absent
};

/// A frozen, validated, compiled set of rules, in file order (files in the order
/// given), indexed by root op. Safe to share between threads once built.
class RuleSet {
 public:
  RuleSet();
  ~RuleSet();
  RuleSet(RuleSet&&) noexcept;
  RuleSet& operator=(RuleSet&&) noexcept;
  RuleSet(const RuleSet&);
  RuleSet& operator=(const RuleSet&);

  /// All rules, enabled or not, in load order.
  const std::vector<Rule>& rules() const { return rules_; }
  std::size_t size() const { return rules_.size(); }
  const Rule& operator[](std::size_t i) const { return rules_[i]; }
  /// The rule called `name`, or null.
  const Rule* find(std::string_view name) const;
  /// Indices of the rules (enabled or not) whose root may be `op`, in rule order,
  /// wildcard-root rules included. Empty when no rule can be rooted at op.
  std::span<const std::uint32_t> rules_for(OpType op) const;
  /// Indices of all enabled rules, in rule order.
  const std::vector<std::uint32_t>& enabled() const { return enabled_; }
  /// The largest Rule::depth (how far below a root a change can be and still matter).
  int max_depth() const { return max_depth_; }
  /// The files the rules came from, in load order.
  const std::vector<RuleFileInfo>& files() const { return files_; }

 private:
  friend class RuleSetBuilder;
  void freeze_();

  std::vector<Rule> rules_;
  std::vector<RuleFileInfo> files_;
  std::vector<std::uint32_t> enabled_;
  std::vector<std::vector<std::uint32_t>> by_op_;  // indexed by OpType::index()
  std::vector<std::uint32_t> wildcard_;            // rules with a `*` root
  int max_depth_ = 0;
};

/// Loads, validates and compiles rule files, in order, with the files they `include:`
/// (each file once, before the including file's rules). A path that is a directory
/// stands for every *.yaml file under it (recursively), sorted by path. Throws graphfuse::Error with
/// file:line:col for malformed YAML, unknown or duplicate keys, bad values, pattern
/// and rewrite syntax or compile errors, include cycles, unknown natives, uses of ops
/// against their `ops:` schema, and rule names defined twice (naming both). A broken rule
/// does not stop the next one from being compiled: when several are broken, the error
/// thrown is an ErrorList (graphfuse/error_list.h) holding each, in file order.
RuleSet load_rule_files(const std::vector<std::string>& paths);

/// load_rule_files through the rule cache: a rule set compiled before from the same paths
/// and the very same file texts, by this same build, is read back instead of compiled
/// (rules/onnx: ~1 ms instead of ~40). The cache lives in $XDG_CACHE_HOME/graphfuse (else
/// ~/.cache/graphfuse); GRAPHFUSE_RULE_CACHE=off turns it off. Results, errors included,
/// are load_rule_files's (docs/rules.md, "The rule cache").
RuleSet load_rule_files_cached(const std::vector<std::string>& paths);

/// The same from memory; `file` names the text in errors and in Rule::loc.
RuleSet load_rules_from_string(std::string_view yaml, const std::string& file = "<rules>");

}  // namespace graphfuse
