// Property tests at scale: random DAGs x every shipped rule set. For each DAG and each rule
// set, rewriting (bounded, no exception on non-convergence) must leave:
//   - a valid graph (Graph::validate: no cycle, no dangling edge, use lists in sync), and
//     every input of every live node a live node's existing output;
//   - every graph output kept: the same number of outputs, each naming the same value
//     (value_name) as before: roots taken over keep their id, and the survivor of an
//     erase-style rewrite at a graph output takes over the output's name (or the rewrite
//     is illegal: erased_output);
//   - a fixed point (every shipped rule set settles);
//   - save, load, save byte-identical in each format (.graph, YAML, JSON, .gfb);
//   - the same bytes as matching every node every round (incremental = false).
// The DAGs use the ops the rule set's patterns and rewrites name, the attribute values the
// patterns test (`{is_training = false}`), constants with the values rules look for (2.0,
// 0.5, 0.7071, ...), typed values and ONNX opset properties, so that rules do fire; every
// fourth case is a generated CNN-like graph (generate_cnn_graph), where the TF rules fire a lot.
//
// GRAPHFUSE_PROPERTY_CASES (default 200) DAGs per rule set; GRAPHFUSE_PROPERTY_SEED varies
// them. The 10^4 run: `cmake --build build --target property_soak` (fuzz/fuzz.cmake).
#include "test_paths.h"
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"

#ifndef GRAPHFUSE_SOURCE_DIR
#define GRAPHFUSE_SOURCE_DIR "."
#endif

namespace graphfuse {
namespace {

namespace fs = std::filesystem;

std::uint64_t env_u64(const char* name, std::uint64_t def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

/// What random graphs for one rule set are made of.
struct Vocabulary {
  std::vector<std::string> ops;                              ///< ops the rules name
  std::vector<std::pair<std::string, AttrValue>> attrs;     ///< `key = literal` the patterns test
};

bool is_op_name(const std::string& s) {
  // Ops are capitalised (`Conv2D`); domain-qualified ones keep a lower-case domain
  // (`com.microsoft.FusedConv`). Builtins (`dim`, `as_tensor`) are lower-case.
  std::size_t dot = s.rfind('.');
  std::string local = dot == std::string::npos ? s : s.substr(dot + 1);
  return !local.empty() && std::isupper(static_cast<unsigned char>(local[0]));
}

std::optional<AttrValue> parse_literal(std::string v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  if (v == "true") return AttrValue(true);
  if (v == "false") return AttrValue(false);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return AttrValue(v.substr(1, v.size() - 2));
  static const std::regex integer("-?[0-9]+"), real("-?[0-9]+\\.[0-9]*([eE]-?[0-9]+)?"),
      ints("\\[ *-?[0-9]+( *, *-?[0-9]+)* *\\]");
  if (std::regex_match(v, integer)) return AttrValue(static_cast<std::int64_t>(std::stoll(v)));
  if (std::regex_match(v, real)) return AttrValue(std::stof(v));
  if (std::regex_match(v, ints)) {
    std::vector<std::int64_t> out;
    static const std::regex num("-?[0-9]+");
    for (auto it = std::sregex_iterator(v.begin(), v.end(), num); it != std::sregex_iterator(); ++it)
      out.push_back(std::stoll(it->str()));
    return AttrValue(out);
  }
  return std::nullopt;
}

Vocabulary vocabulary(const RuleSet& rules) {
  Vocabulary voc;
  std::set<std::string> ops;
  static const std::regex call("([A-Za-z_][A-Za-z0-9_.|]*)\\(");
  static const std::regex braces("\\{([^}]*)\\}");
  static const std::regex assign("([A-Za-z_][A-Za-z0-9_]*) *= *(\"[^\"]*\"|\\[[^\\]]*\\]|[^,}]+)");
  std::set<std::string> seen_attrs;
  for (const Rule& r : rules.rules()) {
    for (const std::string* text : {&r.pattern, &r.rewrite}) {
      for (auto it = std::sregex_iterator(text->begin(), text->end(), call); it != std::sregex_iterator(); ++it) {
        std::string alts = (*it)[1].str();
        for (std::size_t b = 0; b <= alts.size();) {
          std::size_t e = std::min(alts.find('|', b), alts.size());
          std::string name = alts.substr(b, e - b);
          if (is_op_name(name)) ops.insert(name);
          b = e + 1;
        }
      }
    }
    for (auto it = std::sregex_iterator(r.pattern.begin(), r.pattern.end(), braces); it != std::sregex_iterator(); ++it) {
      std::string body = (*it)[1].str();
      for (auto a = std::sregex_iterator(body.begin(), body.end(), assign); a != std::sregex_iterator(); ++a) {
        std::string key = (*a)[1].str(), val = (*a)[2].str();
        if (auto lit = parse_literal(val); lit && seen_attrs.insert(key + "=" + val).second)
          voc.attrs.emplace_back(key, *lit);
      }
    }
  }
  ops.erase("Const");
  ops.erase("Input");
  voc.ops.assign(ops.begin(), ops.end());
  if (voc.ops.empty()) voc.ops = {"Relu", "Add"};
  return voc;
}

/// A random DAG over the vocabulary: inputs, constants, and op nodes reading 1-3 earlier
/// values (mostly recent ones, so chains form), some typed, some with pattern attributes.
Graph random_dag(const Vocabulary& voc, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
  static const std::vector<std::vector<std::int64_t>> shapes = {{}, {8}, {1}, {8, 8}, {1, 8, 4, 4}, {1, 4, 8}, {2, 8}};
  static const std::vector<float> values = {0.0f, 0.5f, 1.0f, 2.0f, 3.0f, -1.0f, 0.7071068f, 1.4142135f,
                                            0.044715f, 0.7978846f, 1e-5f, 6.0f};
  Graph g;
  std::vector<ValueRef> avail;
  int in_count = 1 + static_cast<int>(pick(3));
  for (int i = 0; i < in_count; ++i) {
    ValueType t;
    if (chance(70)) {
      t.dtype = DType::Float32;
      t.shape = shapes[4 + pick(3)];
      t.shape_known = true;
    }
    avail.push_back({g.add_input("in" + std::to_string(i), t), 0});
  }
  const std::size_t n = 8 + pick(72);
  const OpType konst = OpType::intern("Const");
  for (std::size_t i = 0; i < n; ++i) {
    std::string id = "n" + std::to_string(i);
    if (chance(20)) {  // a constant: one of the values rules test, a few shapes
      const auto& shape = shapes[pick(4)];
      std::int64_t count = 1;
      for (auto d : shape) count *= d;
      float v = values[pick(values.size())];
      Tensor t = chance(85) ? Tensor::from_floats(shape, std::vector<float>(static_cast<std::size_t>(count), v))
                            : Tensor::from_ints(shape, std::vector<std::int64_t>(static_cast<std::size_t>(count),
                                                                                 static_cast<std::int64_t>(v)));
      Attributes a;
      a.set("value", t);
      avail.push_back({g.add_node(id, konst, {}, a), 0});
      continue;
    }
    const std::string& op = voc.ops[pick(voc.ops.size())];
    std::vector<ValueRef> ins;
    std::size_t k = 1 + pick(3);
    for (std::size_t j = 0; j < k; ++j) {
      // Mostly the last few values (chains that patterns match), sometimes any earlier one.
      std::size_t back = chance(75) ? std::min<std::size_t>(avail.size(), 1 + pick(4)) : 1 + pick(avail.size());
      ins.push_back(avail[avail.size() - back]);
    }
    Attributes a;
    if (!voc.attrs.empty())
      for (int j = 0, m = static_cast<int>(pick(4)); j < m; ++j) {
        const auto& [key, val] = voc.attrs[pick(voc.attrs.size())];
        a.set(key, val);
      }
    std::uint32_t outs = op.find("Split") != std::string::npos ? 1 + static_cast<std::uint32_t>(pick(3)) : 1;
    NodeId node = g.add_node(id, OpType::intern(op), ins, a, outs);
    if (chance(50)) {
      OutputInfo& info = g.output_infos(node)[0];
      info.type.dtype = DType::Float32;
      info.type.shape = shapes[1 + pick(shapes.size() - 1)];
      info.type.shape_known = true;
    }
    for (std::uint32_t p = 0; p < outs; ++p) avail.push_back({node, p});
  }
  // Graph outputs: every op output nothing reads, and now and then an inner one (which
  // must then survive as an interior node or root).
  for (ValueRef v : avail)
    if (g.op(v.node) != konst && g.op(v.node).name() != "Input" &&
        (g.use_count(v) == 0 || chance(3)))
      g.add_output(v);
  if (g.outputs().empty()) g.add_output(avail.back());
  // ONNX rules ask for opsets (`opset("") >= 17`).
  g.properties().set("onnx.opset_domains", std::vector<std::string>{"", "com.microsoft"});
  g.properties().set("onnx.opset_versions", std::vector<std::int64_t>{17 + static_cast<std::int64_t>(pick(2)) - 4 * chance(20), 1});
  return g;
}

struct NamedRules {
  std::string name;
  RuleSet rules;
  Vocabulary voc;
};

/// Every shipped rule set: each rule file under rules/ on its own (a file with no rules,
/// such as an `ops:` schema, is skipped), and each folder of them as one set.
std::vector<NamedRules> shipped_rule_sets() {
  std::vector<NamedRules> out;
  const fs::path root = fs::path(GRAPHFUSE_SOURCE_DIR) / "rules";
  std::vector<fs::path> paths;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") paths.push_back(e.path());
    if (e.is_directory()) paths.push_back(e.path());
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& p : paths) {
    RuleSet rs = load_rule_files({p.string()});
    if (rs.enabled().empty()) continue;
    std::string name = fs::relative(p, root.parent_path()).string();
    out.push_back({name, rs, vocabulary(rs)});
  }
  return out;
}

std::string check_roundtrip(const Graph& g, const char* format) {
  std::string a, b;
  Graph back;
  std::string f = format;
  if (f == "graph") {
    a = write_graph_text(g);
    back = parse_graph_text(a, "<p>.graph");
    b = write_graph_text(back);
  } else if (f == "yaml") {
    a = write_graph_yaml(g);
    back = parse_graph_yaml(a, "<p>.yaml");
    b = write_graph_yaml(back);
  } else if (f == "json") {
    a = write_graph_json(g);
    back = parse_graph_yaml(a, "<p>.json");
    b = write_graph_json(back);
  } else {
    a = write_graph_binary(g);
    back = parse_graph_binary(a, "<p>.gfb");
    b = write_graph_binary(back);
  }
  back.validate();
  return a == b ? std::string() : std::string("save, load, save differs in ") + format;
}

/// Checks one (graph, rule set) pair; returns what failed, empty when all held.
std::string check_case(const Graph& input, const NamedRules& rs, int threads, std::size_t& applied) {
  Graph g = input;
  std::vector<std::string> out_names;
  for (ValueRef v : g.outputs()) out_names.push_back(g.value_name(v));
  RewriteOptions opt;
  opt.threads = threads;
  opt.max_rounds = 50;
  opt.throw_on_nonconvergence = false;
  RewriteReport rep = rewrite_graph(g, rs.rules, opt);
  for (const RuleStats& s : rep.rules) applied += s.applied;
  if (!rep.converged) return "no fixed point: " + rep.stop_reason;
  try {
    g.validate();
    (void)g.topological_order();
  } catch (const Error& e) {
    return std::string("invalid after rewriting: ") + e.what();
  }
  for (NodeId n : g.nodes())
    for (ValueRef in : g.node(n).inputs)
      if (in.valid() && (!g.alive(in.node) || in.port >= g.node(in.node).outputs.size()))
        return "dangling input of '" + g.node(n).id + "'";
  if (g.outputs().size() != out_names.size()) return "graph output count changed";
  for (std::size_t i = 0; i < out_names.size(); ++i) {
    ValueRef v = g.outputs()[i];
    if (!g.alive(v.node) || v.port >= g.node(v.node).outputs.size()) return "graph output " + out_names[i] + " dangles";
    if (g.value_name(v) != out_names[i]) return "graph output " + out_names[i] + " became " + g.value_name(v);
  }
  for (const char* f : {"graph", "yaml", "json", "gfb"}) {
    std::string why;
    try {
      why = check_roundtrip(g, f);
    } catch (const Error& e) {
      why = std::string("round trip through ") + f + " failed: " + e.what();
    }
    if (!why.empty()) return why;
  }
  // The worklist must not change the result.
  Graph full = input;
  opt.incremental = false;
  rewrite_graph(full, rs.rules, opt);
  if (write_graph_binary(full) != write_graph_binary(g)) return "incremental and full matching differ";
  return {};
}

TEST(PropertyRewrite, RandomDagsTimesEveryShippedRuleSet) {
  const std::uint64_t cases = env_u64("GRAPHFUSE_PROPERTY_CASES", 200);
  const std::uint64_t seed = env_u64("GRAPHFUSE_PROPERTY_SEED", 1);
  std::vector<NamedRules> sets = shipped_rule_sets();
  ASSERT_GE(sets.size(), 10u) << "expected the shipped rule files and folders";
  std::map<std::string, std::size_t> rewrites;  // per rule set, to show the rules fire
  std::size_t checked = 0, failures = 0;
  for (std::uint64_t c = 0; c < cases; ++c) {
    for (const NamedRules& rs : sets) {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + c * 1000003ull + std::hash<std::string>{}(rs.name));
      Graph g;
      if (c % 4 == 3) {
        GenerateOptions go;
        go.nodes = 30 + rng() % 200;
        go.seed = rng();
        g = generate_cnn_graph(go);
      } else {
        g = random_dag(rs.voc, rng);
      }
      ASSERT_NO_THROW(g.validate()) << "generator bug, case " << c;
      std::string why = check_case(g, rs, 1 + static_cast<int>(c % 2), rewrites[rs.name]);
      ++checked;
      if (!why.empty()) {
        ++failures;
        if (failures <= 10) {
          ADD_FAILURE() << rs.name << ", case " << c << " (GRAPHFUSE_PROPERTY_SEED=" << seed << "): " << why
                        << "\ninput graph:\n" << write_graph_text(g);
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u) << failures << " of " << checked << " (graph, rule set) pairs failed";
  std::string fired;
  for (const auto& [name, n] : rewrites) fired += " " + name + "=" + std::to_string(n);
  std::printf("property: %zu (graph, rule set) pairs over %zu rule sets, %zu failed; rewrites:%s\n", checked,
              sets.size(), failures, fired.c_str());
}

}  // namespace
}  // namespace graphfuse
