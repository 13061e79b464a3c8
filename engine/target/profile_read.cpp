// Reading target profiles (targets/*.yaml): every malformed entry is an Error with
// file:line:column, what was expected, and the offending line.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "graphfuse/target.h"

namespace graphfuse {

namespace {

namespace fs = std::filesystem;

struct Reader {
  std::string file;
  std::string text;

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    SourceLoc loc{file, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
    std::string line;
    if (m.line >= 0) {
      std::istringstream in(text);
      for (int i = 0; i <= m.line && std::getline(in, line); ++i) {
      }
    }
    throw Error(loc, msg, line);
  }

  void keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& what) const {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) fail(it->first.Mark(), "keys of " + what + " must be plain names");
      const std::string k = it->first.Scalar();
      if (!seen.insert(k).second) fail(it->first.Mark(), "duplicate key '" + k + "' in " + what);
      if (allowed.count(k)) continue;
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(it->first.Mark(), "unknown key '" + k + "' in " + what + " (expected " + list + ")");
    }
  }

  std::string str(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n.Mark(), what + " must be a string");
    return n.Scalar();
  }

  double number(const YAML::Node& n, const std::string& what, double lo) const {
    if (!n.IsScalar()) fail(n.Mark(), what + " must be a number");
    char* end = nullptr;
    const std::string& s = n.Scalar();
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v)) fail(n.Mark(), what + " must be a number, not '" + s + "'");
    if (v < lo) fail(n.Mark(), what + " must be >= " + std::to_string(lo) + ", not " + s);
    return v;
  }

  bool boolean(const YAML::Node& n, const std::string& what) const {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) return n.Scalar() == "true";
    fail(n.Mark(), what + " must be true or false");
  }

  DType dtype(const YAML::Node& n) const {
    std::string s = str(n, "a dtype");
    auto d = dtype_from_name(s);
    if (!d || *d == DType::Undefined) fail(n.Mark(), "unknown dtype '" + s + "' (expected float32, float16, int8, ...)");
    return *d;
  }

  // A value in a condition's `values` list: a scalar, or a list of scalars (a list attribute).
  std::string value_text(const YAML::Node& n) const {
    if (n.IsScalar()) return n.Scalar();
    if (!n.IsSequence()) fail(n.Mark(), "a condition value must be a scalar or a list of scalars");
    std::string out = "[";
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (!n[i].IsScalar()) fail(n[i].Mark(), "a list value may hold only scalars");
      out += (i ? ", " : "") + n[i].Scalar();
    }
    return out + "]";
  }

  AttrCondition attr_condition(const std::string& name, const YAML::Node& n) const {
    AttrCondition c;
    c.name = name;
    c.loc = SourceLoc{file, n.Mark().line + 1, n.Mark().column + 1};
    if (!n.IsMap()) fail(n.Mark(), "attribute condition '" + name + "' must be a map (values, required, default)");
    keys(n, {"values", "required", "default"}, "attribute condition '" + name + "'");
    if (n["values"]) {
      if (!n["values"].IsSequence()) fail(n["values"].Mark(), "'values' must be a list");
      for (const YAML::Node& v : n["values"]) c.values.push_back(value_text(v));
    }
    if (n["required"]) c.required = boolean(n["required"], "'required'");
    if (n["default"]) c.fallback = value_text(n["default"]);
    return c;
  }

  std::int64_t integer(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n.Mark(), what + " must be an integer");
    const std::string& s = n.Scalar();
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || errno == ERANGE) fail(n.Mark(), what + " must be an integer, not '" + s + "'");
    return v;
  }

  // One entry of an op's `shape` list: {input, dim, values, multiple_of, min, max}.
  ShapeCondition shape_condition(const YAML::Node& n) const {
    ShapeCondition c;
    c.loc = SourceLoc{file, n.Mark().line + 1, n.Mark().column + 1};
    if (!n.IsMap()) fail(n.Mark(), "a shape condition must be a map (input, dim, values, multiple_of, min, max)");
    keys(n, {"input", "dim", "values", "multiple_of", "min", "max"}, "a shape condition");
    if (n["input"]) {
      std::int64_t i = integer(n["input"], "'input'");
      if (i < 0 || i > 64) fail(n["input"].Mark(), "'input' must be an input index from 0 to 64");
      c.input = static_cast<int>(i);
    }
    const YAML::Node d = n["dim"];
    if (!d) fail(n.Mark(), "a shape condition needs `dim` (an index, negative from the end, or a list of them)");
    auto dim = [&](const YAML::Node& x) {
      std::int64_t v = integer(x, "a dim");
      if (v < -64 || v > 64) fail(x.Mark(), "a dim must be from -64 to 64");
      c.dims.push_back(static_cast<int>(v));
    };
    if (d.IsSequence()) {
      if (d.size() == 0) fail(d.Mark(), "'dim' lists no dim");
      for (const YAML::Node& x : d) dim(x);
    } else {
      dim(d);
    }
    if (const YAML::Node v = n["values"]) {
      if (!v.IsSequence() || v.size() == 0) fail(v.Mark(), "'values' must be a non-empty list of integers");
      for (const YAML::Node& x : v) c.values.push_back(integer(x, "a value"));
    }
    if (n["multiple_of"]) {
      c.multiple_of = integer(n["multiple_of"], "'multiple_of'");
      if (c.multiple_of < 1) fail(n["multiple_of"].Mark(), "'multiple_of' must be >= 1");
    }
    if (n["min"]) c.min = integer(n["min"], "'min'");
    if (n["max"]) c.max = integer(n["max"], "'max'");
    if (n["min"] && n["max"] && c.min > c.max) fail(n["max"].Mark(), "'max' is below 'min'");
    if (!n["values"] && !n["multiple_of"] && !n["min"] && !n["max"])
      fail(n.Mark(), "a shape condition must say what the dim may be (values, multiple_of, min or max)");
    return c;
  }

  OpSupport op(const std::string& name, const YAML::Node& n) const {
    OpSupport s;
    s.op = name;
    s.loc = SourceLoc{file, n.Mark().line + 1, n.Mark().column + 1};
    if (n.IsNull()) return s;  // `Op:` alone: available, no conditions
    if (!n.IsMap()) fail(n.Mark(), "op '" + name + "' must map to its conditions (dtype, rank, inputs, shape, attributes)");
    keys(n, {"available", "pays", "slower_than", "pays_up_to", "dtype", "rank", "inputs", "shape", "attributes", "note"},
         "op '" + name + "'");
    if (n["available"]) s.available = boolean(n["available"], "'available'");
    if (n["pays"]) s.pays = boolean(n["pays"], "'pays'");
    if (const YAML::Node l = n["slower_than"]) {
      if (!l.IsSequence() || l.size() == 0) fail(l.Mark(), "'slower_than' must be a non-empty list of op names");
      if (s.pays) fail(l.Mark(), "'slower_than' says what a 'pays: false' op was measured against; this op pays");
      for (const YAML::Node& x : l) s.slower_than.push_back(str(x, "an op name"));
    }
    if (const YAML::Node u = n["pays_up_to"]) {
      if (!u.IsMap()) fail(u.Mark(), "'pays_up_to' must be a map ({input: N, elements: M})");
      if (s.pays) fail(u.Mark(), "'pays_up_to' bounds where a 'pays: false' op pays after all; this op pays");
      keys(u, {"input", "elements"}, "'pays_up_to'");
      if (!u["elements"]) fail(u.Mark(), "'pays_up_to' needs 'elements'");
      s.pays_up_to = integer(u["elements"], "'elements'");
      if (s.pays_up_to < 1) fail(u["elements"].Mark(), "'elements' must be >= 1");
      if (u["input"]) s.pays_up_to_input = static_cast<int>(number(u["input"], "'input'", 0));
    }
    if (n["note"]) s.note = str(n["note"], "'note'");
    if (const YAML::Node d = n["dtype"]) {
      if (!d.IsSequence()) fail(d.Mark(), "'dtype' must be a list of dtypes");
      for (const YAML::Node& x : d) s.dtypes.push_back(dtype(x));
    }
    if (const YAML::Node r = n["rank"]) {
      if (!r.IsSequence()) fail(r.Mark(), "'rank' must be a list of ranks");
      for (const YAML::Node& x : r) s.ranks.push_back(static_cast<int>(number(x, "a rank", 0)));
    }
    if (const YAML::Node in = n["inputs"]) {
      if (!in.IsMap()) fail(in.Mark(), "'inputs' must be a map ({max: N})");
      keys(in, {"max"}, "'inputs'");
      if (in["max"]) s.max_inputs = static_cast<int>(number(in["max"], "'max'", 0));
    }
    if (const YAML::Node sh = n["shape"]) {
      if (!sh.IsSequence()) fail(sh.Mark(), "'shape' must be a list of conditions ({input, dim, values, ...})");
      for (const YAML::Node& c : sh) s.shapes.push_back(shape_condition(c));
    }
    if (const YAML::Node a = n["attributes"]) {
      if (!a.IsMap()) fail(a.Mark(), "'attributes' must map attribute names to conditions");
      for (auto it = a.begin(); it != a.end(); ++it) s.attrs.push_back(attr_condition(it->first.Scalar(), it->second));
    }
    return s;
  }

  std::vector<EfficiencyPoint> curve(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence()) fail(n.Mark(), what + " must be a list of [size, fraction] pairs");
    std::vector<EfficiencyPoint> pts;
    for (const YAML::Node& p : n) {
      if (!p.IsSequence() || p.size() != 2) fail(p.Mark(), "an efficiency point is [size, fraction]");
      EfficiencyPoint e{number(p[0], "a size", 0), number(p[1], "a fraction", 0)};
      if (e.fraction <= 0 || e.fraction > 4) fail(p[1].Mark(), "a fraction must be in (0, 4]");
      if (!pts.empty() && e.size <= pts.back().size) fail(p[0].Mark(), "efficiency sizes must increase");
      pts.push_back(e);
    }
    return pts;
  }

  MachineFigures machine(const YAML::Node& n) const {
    MachineFigures m;
    if (!n.IsMap()) fail(n.Mark(), "'machine' must be a map");
    keys(n, {"peak_gflops", "bandwidth_gbs", "kernel_overhead_us", "cache_mb", "threads", "efficiency"}, "'machine'");
    if (!n["peak_gflops"]) fail(n.Mark(), "'machine' needs peak_gflops ({float32: N, ...})");
    if (!n["peak_gflops"].IsMap()) fail(n["peak_gflops"].Mark(), "'peak_gflops' must map dtypes to GFLOP/s");
    for (auto it = n["peak_gflops"].begin(); it != n["peak_gflops"].end(); ++it) {
      double v = number(it->second, "peak GFLOP/s", 0);
      if (v <= 0) fail(it->second.Mark(), "peak GFLOP/s must be > 0");
      m.peak_gflops[dtype(it->first)] = v;
    }
    if (!m.peak_gflops.count(DType::Float32)) fail(n["peak_gflops"].Mark(), "'peak_gflops' needs a float32 entry");
    if (!n["bandwidth_gbs"]) fail(n.Mark(), "'machine' needs bandwidth_gbs");
    m.bandwidth_gbs = number(n["bandwidth_gbs"], "'bandwidth_gbs'", 0);
    if (m.bandwidth_gbs <= 0) fail(n["bandwidth_gbs"].Mark(), "'bandwidth_gbs' must be > 0");
    if (n["kernel_overhead_us"]) m.kernel_overhead_us = number(n["kernel_overhead_us"], "'kernel_overhead_us'", 0);
    if (n["cache_mb"]) m.cache_mb = number(n["cache_mb"], "'cache_mb'", 0);
    if (n["threads"]) m.threads = static_cast<int>(number(n["threads"], "'threads'", 1));
    if (const YAML::Node e = n["efficiency"]) {
      if (!e.IsMap()) fail(e.Mark(), "'efficiency' must map kernel kinds (conv, matmul, eltwise, ...) to curves");
      keys(e, {"conv", "conv1x1", "dwconv", "matmul", "eltwise", "transpose", "math"}, "'efficiency'");
      for (auto it = e.begin(); it != e.end(); ++it)
        m.efficiency[it->first.Scalar()] = curve(it->second, "efficiency '" + it->first.Scalar() + "'");
    }
    return m;
  }

  TargetProfile profile(const YAML::Node& root) const {
    if (!root.IsMap()) fail(root.IsDefined() ? root.Mark() : YAML::Mark{}, "a target profile must be a map (target, machine, ops)");
    keys(root, {"target", "doc", "standard_ops", "machine", "ops", "min_saving_us", "min_saving_fraction", "raise_onnx_opset"},
         "a target profile");
    TargetProfile t;
    t.file = file;
    if (!root["target"]) fail(root.Mark(), "a target profile needs `target: NAME`");
    t.name = str(root["target"], "'target'");
    if (root["doc"]) t.doc = str(root["doc"], "'doc'");
    if (const YAML::Node s = root["standard_ops"]) {
      if (!s.IsSequence()) fail(s.Mark(), "'standard_ops' must be a list of op-name globs");
      for (const YAML::Node& g : s) t.standard_ops.push_back(str(g, "an op-name glob"));
    }
    if (!root["machine"]) fail(root.Mark(), "a target profile needs `machine:` (peak_gflops, bandwidth_gbs, ...)");
    t.machine = machine(root["machine"]);
    if (root["min_saving_us"]) t.min_saving_us = number(root["min_saving_us"], "'min_saving_us'", 0);
    if (root["min_saving_fraction"]) t.min_saving_fraction = number(root["min_saving_fraction"], "'min_saving_fraction'", 0);
    if (const YAML::Node r = root["raise_onnx_opset"]) {
      const double v = number(r, "'raise_onnx_opset'", 1);
      if (v != std::floor(v) || v > 1000) fail(r.Mark(), "'raise_onnx_opset' must be an ONNX opset version (a whole number like 17)");
      t.raise_onnx_opset = static_cast<std::int64_t>(v);
    }
    if (const YAML::Node ops = root["ops"]) {
      if (!ops.IsMap() && !ops.IsNull()) fail(ops.Mark(), "'ops' must map op names to conditions");
      std::set<std::string> seen;
      for (auto it = ops.begin(); ops.IsMap() && it != ops.end(); ++it) {
        std::string name = str(it->first, "an op name");
        if (!seen.insert(name).second) fail(it->first.Mark(), "op '" + name + "' listed twice");
        t.ops.push_back(op(name, it->second));
      }
    }
    return t;
  }
};

}  // namespace

TargetProfile load_target_from_string(std::string_view yaml, const std::string& file) {
  Reader r{file, std::string(yaml)};
  YAML::Node root;
  try {
    root = YAML::Load(r.text);
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, "malformed YAML: " + e.msg);
  }
  return r.profile(root);
}

bool is_target_profile_text(std::string_view yaml) {
  for (std::size_t at = 0; at < yaml.size();) {
    std::size_t end = yaml.find('\n', at);
    if (end == std::string_view::npos) end = yaml.size();
    std::string_view line = yaml.substr(at, end - at);
    if (line.rfind("target:", 0) == 0) return true;
    at = end + 1;
  }
  return false;
}

std::vector<std::string> target_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("GRAPHFUSE_TARGETS")) {
    std::string s = env;
    for (std::size_t a = 0; a <= s.size();) {
      std::size_t b = s.find(':', a);
      if (b == std::string::npos) b = s.size();
      if (b > a) dirs.push_back(s.substr(a, b - a));
      a = b + 1;
    }
  }
#ifdef GRAPHFUSE_SOURCE_TARGETS
  dirs.push_back(GRAPHFUSE_SOURCE_TARGETS);
#endif
#ifdef GRAPHFUSE_INSTALLED_TARGETS
  dirs.push_back(GRAPHFUSE_INSTALLED_TARGETS);
#endif
  return dirs;
}

TargetProfile load_target(const std::string& name_or_file) {
  fs::path path = name_or_file;
  const std::string ext = path.extension().string();
  const bool is_path = name_or_file.find('/') != std::string::npos || ext == ".yaml" || ext == ".yml";
  if (!is_path) {
    std::set<std::string> known;
    path.clear();
    for (const std::string& d : target_dirs()) {
      std::error_code ec;
      fs::path p = fs::path(d) / (name_or_file + ".yaml");
      if (path.empty() && fs::is_regular_file(p, ec)) path = p;
      for (const auto& e : fs::directory_iterator(d, ec))
        if (e.path().extension() == ".yaml") known.insert(e.path().stem().string());
    }
    std::string names;
    for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
    if (path.empty())
      throw Error("unknown target '" + name_or_file + "' (known: " + (names.empty() ? "none found" : names) +
                  "; or give a profile file)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(SourceLoc{path.string()}, "cannot read target profile");
  std::stringstream ss;
  ss << in.rdbuf();
  return load_target_from_string(ss.str(), path.string());
}

}  // namespace graphfuse
