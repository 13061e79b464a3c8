// `graphfuse backend-test MANIFEST`: the graphfuse side of ONNX's backend test suite
// (tests/backend), many cases in one process. For each case of the manifest it
//   (a) applies the rules to the model and saves the result (ONNX Runtime judges it later),
//   (b) applies the rules with --fold all to the model whose inputs are frozen as
//       initializers, saves it and says whether it folded completely (no compute node left),
//   (c) runs the model with the reference kernels on the case's inputs and compares the
//       outputs with the expected ones, where the reference kernels implement every op.
// One JSON line per case goes to stdout as soon as the case is done, so that the driver can
// resume after a case that brings the process down.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/fold_step.h"
#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#ifdef GRAPHFUSE_HAVE_KERNELS
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/kernel.h"
#endif

namespace graphfuse::cli {

namespace {
struct BackendOptions {
  std::string manifest;
  std::vector<std::string> rules;
  std::size_t first = 0;  ///< index of the first case to run (the driver resumes with it)
  double rtol = 1e-3;     ///< ONNX's backend tests compare with rtol 1e-3, atol 1e-7
  double atol = 1e-7;
  bool list_kernels = false;  ///< instead: one JSON line per registered op (tests/backend/coverage_table.py)
};

using json = nlohmann::json;

#ifdef GRAPHFUSE_HAVE_KERNELS
namespace gk = graphfuse::kernels;

// A raw little-endian tensor file described by the manifest (name, dtype, shape, file).
Tensor read_tensor(const json& spec) {
  const std::string file = spec.at("file").get<std::string>();
  const std::string dtype = spec.at("dtype").get<std::string>();
  auto dt = dtype_from_name(dtype);
  if (!dt) throw Error(file + ": unknown dtype '" + dtype + "'");
  Tensor t;
  t.dtype = *dt;
  t.shape = spec.at("shape").get<std::vector<std::int64_t>>();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::int64_t n = 1;
  for (std::int64_t d : t.shape) n *= d;
  if (bytes.size() != static_cast<std::size_t>(n) * dtype_size(t.dtype))
    throw Error(file + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                std::to_string(static_cast<std::size_t>(n) * dtype_size(t.dtype)));
  t.data = std::make_shared<const std::string>(std::move(bytes));
  return t;
}

// Compute nodes: everything but graph inputs and constants.
std::size_t compute_nodes(const Graph& g) {
  static const OpType kInput = OpType::intern(ops::kInput);
  std::size_t n = 0;
  for (NodeId id : g.nodes()) {
    const Node& node = g.node(id);
    if (node.op == kInput || is_constant(g, {id, 0}) || node.op.name() == "Constant") continue;
    ++n;
  }
  return n;
}

// The op types of the compute nodes left, sorted, once each.
std::vector<std::string> left_ops(const Graph& g) {
  static const OpType kInput = OpType::intern(ops::kInput);
  std::set<std::string> ops;
  for (NodeId id : g.nodes()) {
    const Node& node = g.node(id);
    if (node.op == kInput || is_constant(g, {id, 0}) || node.op.name() == "Constant") continue;
    ops.insert(std::string(node.op.name()));
  }
  return {ops.begin(), ops.end()};
}

// The first op the reference kernels lack, or "".
std::string missing_op(const Graph& g) {
  static const OpType kInput = OpType::intern(ops::kInput);
  const gk::KernelRegistry& reg = gk::registry(gk::KernelSet::Reference);
  for (NodeId id : g.nodes()) {
    const Node& node = g.node(id);
    if (node.op == kInput || is_constant(g, {id, 0})) continue;
    if (!reg.has(node.op.name())) return std::string(node.op.name());
  }
  return "";
}

json run_apply(const std::string& in, const std::string& out, const RuleSet& rules, const std::string& fold) {
  json r;
  try {
    Graph g = load_graph(in);
    RewriteOptions ro;
    ro.threads = 1;
    ro.throw_on_nonconvergence = false;
    RewriteReport rep = rewrite_with_fold(g, rules, ro, fold);
    if (!rep.converged) throw Error(rep.stop_reason);
    save_graph(g, out);
    r["status"] = "ok";
    r["rewrites"] = rep.nodes_before - g.size();
    r["folded"] = rep.fold.folded.size();
    r["left"] = compute_nodes(g);
    r["left_ops"] = left_ops(g);
  } catch (const std::exception& e) {
    r["status"] = "error";
    r["message"] = e.what();
  }
  return r;
}

json run_reference(const json& c, double rtol, double atol) {
  json r;
  try {
    Graph g = load_graph(c.at("model").get<std::string>());
    if (std::string op = missing_op(g); !op.empty()) {
      r["status"] = "unsupported";
      r["message"] = "no reference kernel for " + op;
      return r;
    }
    std::vector<Tensor> inputs, expected;
    std::vector<std::string> names;
    for (const json& s : c.at("inputs")) inputs.push_back(read_tensor(s));
    for (const json& s : c.at("outputs")) {
      expected.push_back(read_tensor(s));
      names.push_back(s.at("name").get<std::string>());
    }
    if (inputs.size() != g.inputs().size())
      throw Error(std::to_string(inputs.size()) + " input files for " + std::to_string(g.inputs().size()) +
                  " graph inputs");
    gk::ExecOptions exec;
    exec.set = gk::KernelSet::Reference;
    exec.threads = 1;
    std::vector<Tensor> actual = gk::run_graph(g, inputs, exec);
    std::string fails;
    if (actual.size() != expected.size()) {
      fails = std::to_string(actual.size()) + " outputs, expected " + std::to_string(expected.size());
    } else {
      for (std::size_t i = 0; i < actual.size(); ++i) {
        if (actual[i].dtype != expected[i].dtype) {
          fails += names[i] + ": dtype " + std::string(dtype_name(actual[i].dtype)) + ", expected " +
                   std::string(dtype_name(expected[i].dtype)) + "; ";
          continue;
        }
        for (const gk::TensorDiff& d : gk::compare_outputs({actual[i]}, {expected[i]}, rtol, atol, {names[i]}))
          if (!d.pass)
            fails += d.name + (d.shape_ok ? ": max_abs " + std::to_string(d.max_abs) : ": shape differs") + "; ";
      }
    }
    r["status"] = fails.empty() ? "pass" : "mismatch";
    if (!fails.empty()) r["message"] = fails;
  } catch (const std::exception& e) {
    r["status"] = "error";
    r["message"] = e.what();
  }
  return r;
}

// Every op the reference set registers, and whether the fast set has a kernel of its own.
int list_kernels() {
  const std::vector<std::string> fast = gk::fast_kernel_ops();
  for (const std::string& op : gk::registry(gk::KernelSet::Reference).ops())
    std::cout << json{{"op", op}, {"fast", std::binary_search(fast.begin(), fast.end(), op)}}.dump() << "\n";
  return 0;
}

int run_backend(const BackendOptions& o) {
  if (o.list_kernels) return list_kernels();
  if (o.manifest.empty()) throw Error("backend-test: give a MANIFEST or --list-kernels");
  std::ifstream in(o.manifest);
  if (!in) throw Error(o.manifest + ": cannot open");
  json manifest;
  try {
    manifest = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(o.manifest + ": " + e.what());
  }
  RuleSet rules = load_rule_files_cached(o.rules);
  const json& cases = manifest.at("cases");
  for (std::size_t i = o.first; i < cases.size(); ++i) {
    const json& c = cases[i];
    json r;
    r["index"] = i;
    r["name"] = c.at("name");
    r["a"] = run_apply(c.at("model").get<std::string>(), c.at("applied").get<std::string>(), rules, "auto");
    if (c.contains("frozen"))
      r["b"] = run_apply(c.at("frozen").get<std::string>(), c.at("folded").get<std::string>(), rules, "all");
    r["c"] = run_reference(c, o.rtol, o.atol);
    std::cout << r.dump() << std::endl;  // flushed: the driver resumes after a crash
  }
  return 0;
}
#else
int run_backend(const BackendOptions&) { throw Error("graphfuse was built without the kernels; backend-test needs them"); }
#endif
}  // namespace

void register_backend(CLI::App& app, Handler& run) {
  auto opt = std::make_shared<BackendOptions>();
  CLI::App* cmd = app.add_subcommand(
      "backend-test", "ONNX backend test cases from a manifest (tests/backend): apply, fold, reference run; JSON lines");
  cmd->add_option("MANIFEST", opt->manifest, "manifest.json written by tests/backend/backend_suite.py");
  cmd->add_flag("--list-kernels", opt->list_kernels,
                "Print one JSON line per op with a reference kernel: {\"op\", \"fast\"} (no MANIFEST)");
  cmd->add_option("-r,--rules", opt->rules, "Rule file (repeatable)")->allow_extra_args(false);
  cmd->add_option("--first", opt->first, "Index of the first case to run")->capture_default_str();
  cmd->add_option("--rtol", opt->rtol, "Relative tolerance of the reference run")->capture_default_str();
  cmd->add_option("--atol", opt->atol, "Absolute tolerance of the reference run")->capture_default_str();
  cmd->callback([opt, &run] { run = [opt] { return run_backend(*opt); }; });
}

}  // namespace graphfuse::cli
