// The `graphfuse` Python module (pybind11): load rules and graphs, rewrite, save, ONNX bytes
// in and out, numerical verification. docs/python.md is its user guide. Every operation that
// can take long (loading, rewriting, serializing, running kernels) releases the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graphfuse/cost.h"
#include "graphfuse/folding.h"
#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/fold.h"
#include "graphfuse/onnx.h"
#include "graphfuse/process_memory.h"
#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "graphfuse/version.h"

namespace py = pybind11;
namespace gf = graphfuse;

namespace {

/// A rewrite's outcome, as Python sees it: plain fields and dicts.
struct PyReport {
  std::map<std::string, std::size_t> rewrites;  // rules that applied, with their counts
  int rounds = 0;
  bool converged = false;
  std::size_t nodes_before = 0;
  std::size_t nodes_after = 0;
  std::string stop_reason;
  std::size_t folded = 0;
  std::size_t removed = 0;
  std::vector<std::string> notes;  // what the target did to the graph first (its opset raise)
  std::string stats_json;  // the same document as `graphfuse apply --stats-json`
  std::string stats_text;  // the same table as `graphfuse apply --stats`
};

/// Options shared by Graph.rewrite, optimize and verify, with the CLI's defaults.
struct PyRewriteOptions {
  int threads = 0;
  std::optional<std::string> target;
  std::string fold = "auto";
  int max_rounds = 100;
  std::size_t max_nodes = 0;
  std::vector<std::string> only;
};

gf::RewriteOptions to_engine(const PyRewriteOptions& o) {
  if (o.max_rounds < 1) throw gf::Error("max_rounds must be at least 1 (got " + std::to_string(o.max_rounds) + ")");
  if (o.threads < 0) throw gf::Error("threads must be 0 (all cores) or more (got " + std::to_string(o.threads) + ")");
  gf::RewriteOptions r;
  r.threads = o.threads;
  r.max_rounds = o.max_rounds;
  r.max_nodes = o.max_nodes;
  r.only_rules = o.only;
  r.rule_times = false;  // times would make stats differ between identical runs
  // A target profile (name or file) gates the rewrite as `--target` does (docs/cost-model.md).
  if (o.target) r.gate = gf::make_target_gate(std::make_shared<const gf::CostModel>(gf::load_target(*o.target)));
  return r;
}

PyReport rewrite_in_place(gf::Graph& g, const gf::RuleSet& rules, const PyRewriteOptions& o, bool throw_unconverged) {
  gf::RewriteOptions r = to_engine(o);
  r.throw_on_nonconvergence = throw_unconverged;
  std::unique_ptr<gf::Folder> folder = gf::kernels::make_folder(o.fold);
  gf::RewriteReport report = gf::rewrite_and_fold(g, rules, r, folder.get());
  PyReport out;
  for (const gf::RuleStats& s : report.rules)
    if (s.applied) out.rewrites[s.rule] += s.applied;
  out.rounds = report.rounds;
  out.converged = report.converged;
  out.nodes_before = report.nodes_before;
  out.nodes_after = g.size();
  out.stop_reason = report.stop_reason;
  out.folded = report.fold.folded.size();
  out.removed = report.fold.removed.size();
  out.notes = report.notes;
  out.stats_json = gf::stats_json(report);
  out.stats_text = gf::format_stats(report);
  return out;
}

/// load_rules accepts a path, a directory, or a list of them (str or os.PathLike).
using PathOrList = std::variant<std::filesystem::path, std::vector<std::filesystem::path>>;
std::vector<std::string> rule_paths(const PathOrList& p) {
  std::vector<std::string> out;
  if (const auto* one = std::get_if<std::filesystem::path>(&p)) out.push_back(one->string());
  else
    for (const auto& x : std::get<std::vector<std::filesystem::path>>(p)) out.push_back(x.string());
  if (out.empty()) throw gf::Error("load_rules: no rule files given");
  return out;
}

std::map<std::string, std::size_t> op_counts(const gf::Graph& g) {
  std::map<std::string, std::size_t> h;
  g.for_each_node([&](gf::NodeId n) { ++h[std::string(g.op(n).name())]; });
  return h;
}

/// The numerical check of `graphfuse verify`: seeded inputs and constants, the rewrite with
/// folding, both graphs run on the chosen kernels, outputs compared.
py::dict verify_impl(const gf::Graph& input, const gf::RuleSet& rules, const PyRewriteOptions& o,
                     const std::string& kernels, std::uint64_t seed, double rtol, double atol) {
  namespace gk = gf::kernels;
  std::vector<gk::TensorDiff> diffs;
  PyReport report;
  {
    py::gil_scoped_release release;
    gk::ExecOptions exec;
    exec.set = gk::kernel_set_from_name(kernels);
    exec.threads = o.threads;
    exec.seed = seed;
    gf::Graph original = input;
    gk::materialize_constants(original, seed);  // both graphs see the same weights
    gf::Graph rewritten = original;
    report = rewrite_in_place(rewritten, rules, o, /*throw_unconverged=*/true);
    diffs = gk::verify_rewrite(original, rewritten, exec, rtol, atol);
  }
  py::list outputs;
  bool pass = true;
  for (const auto& d : diffs) {
    py::dict row;
    row["name"] = d.name;
    row["max_abs"] = d.max_abs;
    row["max_rel"] = d.max_rel;
    row["max_ref"] = d.max_ref;
    row["shape_ok"] = d.shape_ok;
    row["passed"] = d.pass;
    outputs.append(row);
    pass = pass && d.pass;
  }
  py::dict out;
  out["passed"] = pass;
  out["outputs"] = outputs;
  out["rewrites"] = report.rewrites;
  out["nodes_before"] = report.nodes_before;
  out["nodes_after"] = report.nodes_after;
  return out;
}

}  // namespace

PYBIND11_MODULE(_graphfuse, m) {
  m.doc() = "graphfuse: declarative graph rewriting (rules in YAML, graphs in .graph/YAML/JSON/.gfb/ONNX)";
  m.attr("__version__") = gf::kVersion;

  // graphfuse.Error carries the engine's message ("file:line:col: error: ...") and its parts.
  static py::exception<gf::Error> error_type(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gf::Error& e) {
      // Call the type object (py::exception's own operator() only sets the error).
      py::object inst = py::reinterpret_borrow<py::object>(error_type.ptr())(e.pretty());
      inst.attr("file") = e.loc().file.str();
      inst.attr("line") = e.loc().line;
      inst.attr("column") = e.loc().column;
      inst.attr("message") = e.message();
      PyErr_SetObject(error_type.ptr(), inst.ptr());
    }
  });

  py::class_<PyReport>(m, "Report", "What a rewrite did.")
      .def_readonly("rewrites", &PyReport::rewrites, "{rule name: rewrites applied}, rules that fired only")
      .def_readonly("rounds", &PyReport::rounds, "rounds that applied at least one rewrite")
      .def_readonly("converged", &PyReport::converged, "True when a round found nothing more to apply")
      .def_readonly("nodes_before", &PyReport::nodes_before)
      .def_readonly("nodes_after", &PyReport::nodes_after)
      .def_readonly("stop_reason", &PyReport::stop_reason, "'fixed point' or why the rewriter stopped")
      .def_readonly("folded", &PyReport::folded, "nodes evaluated into constants")
      .def_readonly("removed", &PyReport::removed, "constants removed for lack of users")
      .def_readonly("notes", &PyReport::notes,
                    "what the target did to the graph before rewriting, one line each (raise_onnx_opset)")
      .def_property_readonly(
          "stats",
          [](const PyReport& r) { return py::module_::import("json").attr("loads")(r.stats_json); },
          "per-rule and per-round statistics as dicts (the `apply --stats-json` document)")
      .def_readonly("stats_text", &PyReport::stats_text, "the `apply --stats` table")
      .def("__repr__", [](const PyReport& r) {
        return "<graphfuse.Report " + std::to_string(r.nodes_before) + " -> " + std::to_string(r.nodes_after) +
               " nodes, " + std::to_string(r.rounds) + " rounds, " + (r.converged ? "converged" : r.stop_reason) + ">";
      });

  py::class_<gf::RuleSet>(m, "Rules", "A loaded, compiled rule set (load_rules, load_rules_from_string).")
      .def("__len__", &gf::RuleSet::size)
      .def_property_readonly("names",
                             [](const gf::RuleSet& rs) {
                               std::vector<std::string> n;
                               for (const gf::Rule& r : rs.rules()) n.push_back(r.name);
                               return n;
                             },
                             "rule names in load order")
      .def("__repr__", [](const gf::RuleSet& rs) { return "<graphfuse.Rules " + std::to_string(rs.size()) + " rules>"; });

  m.def("load_rules",
        [](const PathOrList& p) {
          std::vector<std::string> paths = rule_paths(p);
          py::gil_scoped_release release;
          return gf::load_rule_files(paths);
        },
        py::arg("paths"), "Loads rule files: a path, a directory (every *.yaml under it), or a list of them.");
  m.def("load_rules_from_string",
        [](const std::string& text, const std::string& name) { return gf::load_rules_from_string(text, name); },
        py::arg("text"), py::arg("name") = "<rules>", "Loads rules from YAML text; `name` labels it in errors.");

  py::class_<gf::Graph>(m, "Graph", "A computation graph (load_graph, Graph.from_onnx_bytes, Graph.from_text).")
      .def_static("from_text",
                  [](const std::string& text, const std::string& name) { return gf::parse_graph_text(text, name); },
                  py::arg("text"), py::arg("name") = "<text>", "Parses the .graph text form.")
      .def_static("from_onnx_bytes",
                  [](py::bytes data, const std::string& name) {
                    std::string_view bytes = data;
                    py::gil_scoped_release release;
                    return gf::parse_onnx(bytes, name);
                  },
                  py::arg("data"), py::arg("name") = "<onnx>", "Reads a serialized ONNX ModelProto.")
      .def("__len__", &gf::Graph::size)
      .def("copy", [](const gf::Graph& g) { return gf::Graph(g); })
      .def("op_counts", &op_counts, "{op type: number of nodes}")
      .def(
          "rewrite",
          [](gf::Graph& g, const gf::RuleSet& rules, int threads, std::optional<std::string> target, std::string fold,
             int max_rounds, std::size_t max_nodes, std::vector<std::string> only) {
            PyRewriteOptions o{threads, std::move(target), std::move(fold), max_rounds, max_nodes, std::move(only)};
            py::gil_scoped_release release;
            return rewrite_in_place(g, rules, o, /*throw_unconverged=*/false);
          },
          py::arg("rules"), py::kw_only(), py::arg("threads") = 0, py::arg("target") = py::none(),
          py::arg("fold") = "auto", py::arg("max_rounds") = 100, py::arg("max_nodes") = 0,
          py::arg("only") = std::vector<std::string>{},
          "Rewrites the graph in place to a fixed point. When Report.converged is False the graph is "
          "valid but only partly rewritten.")
      .def("save",
           [](const gf::Graph& g, const std::filesystem::path& path) {
             py::gil_scoped_release release;
             gf::save_graph(g, path.string());
           },
           py::arg("path"), "Saves atomically; the format follows the extension.")
      .def("to_text", [](const gf::Graph& g) { return gf::write_graph_text(g); }, "The .graph text form.")
      .def("to_onnx_bytes",
           [](const gf::Graph& g) {
             std::string bytes;
             {
               py::gil_scoped_release release;
               bytes = gf::write_onnx(g);
             }
             return py::bytes(bytes);
           },
           "The serialized ONNX model (what save('x.onnx') writes).")
      .def("__repr__", [](const gf::Graph& g) { return "<graphfuse.Graph " + std::to_string(g.size()) + " nodes>"; });

  m.def(
      "retain_freed_memory",
      [] {
        gf::MemoryRetention r = gf::retain_freed_memory();
        return py::make_tuple(r.applied, r.detail);
      },
      "Keeps memory the process frees for its own reuse instead of returning it to the kernel "
      "(glibc's allocator, process-wide; see docs/library.md). Returns (applied, detail).");
  m.def(
      "reserve_huge_page_heap",
      [](std::size_t megabytes) {
        gf::MemoryRetention r = gf::reserve_huge_page_heap(megabytes << 20);
        return py::make_tuple(r.applied, r.detail);
      },
      py::arg("megabytes") = gf::kHugePageHeapBytes >> 20,
      "Turns huge pages on: backs the heap's next `megabytes` and, from then on, graphs' big arrays "
      "with transparent huge pages (after retain_freed_memory(); process-wide; off unless called: "
      "they can cost a run after idle on a VM more than they save, see docs/library.md). "
      "Returns (applied, detail).");

  m.def("load_graph",
        [](const std::filesystem::path& path) {
          py::gil_scoped_release release;
          return gf::load_graph(path.string());
        },
        py::arg("path"), "Loads .graph, .yaml/.yml, .json, .gfb or .onnx (by extension).");

  m.def(
      "optimize",
      [](py::bytes model, const gf::RuleSet& rules, int threads, std::optional<std::string> target, std::string fold,
         int max_rounds, std::size_t max_nodes, std::vector<std::string> only) {
        PyRewriteOptions o{threads, std::move(target), std::move(fold), max_rounds, max_nodes, std::move(only)};
        std::string_view in = model;
        std::string out;
        {
          py::gil_scoped_release release;
          gf::Graph g = gf::parse_onnx(in, "<model>");
          rewrite_in_place(g, rules, o, /*throw_unconverged=*/true);
          out = gf::write_onnx(g);
        }
        return py::bytes(out);
      },
      py::arg("model"), py::arg("rules"), py::kw_only(), py::arg("threads") = 0, py::arg("target") = py::none(),
      py::arg("fold") = "auto", py::arg("max_rounds") = 100, py::arg("max_nodes") = 0,
      py::arg("only") = std::vector<std::string>{},
      "Rewrites a serialized ONNX model and returns the new model's bytes (the bytes `graphfuse apply` "
      "writes). Raises Error when the rules do not reach a fixed point.");

  m.def(
      "verify",
      [](py::object graph, const gf::RuleSet& rules, std::string kernels, std::uint64_t seed, double rtol, double atol,
         int threads, std::string fold, std::vector<std::string> only) {
        PyRewriteOptions o{threads, std::nullopt, std::move(fold), 100, 0, std::move(only)};
        if (py::isinstance<gf::Graph>(graph)) return verify_impl(graph.cast<const gf::Graph&>(), rules, o, kernels, seed, rtol, atol);
        gf::Graph g;
        {
          std::string path = graph.cast<std::filesystem::path>().string();
          py::gil_scoped_release release;
          g = gf::load_graph(path);
        }
        return verify_impl(g, rules, o, kernels, seed, rtol, atol);
      },
      py::arg("graph"), py::arg("rules"), py::kw_only(), py::arg("kernels") = "reference", py::arg("seed") = 0,
      py::arg("rtol") = 1e-4, py::arg("atol") = 1e-5, py::arg("threads") = 0, py::arg("fold") = "auto",
      py::arg("only") = std::vector<std::string>{},
      "Rewrites a copy of `graph` (a Graph or a path) and runs both on the same seeded inputs: "
      "{'passed': bool, 'outputs': [{'name', 'max_abs', 'max_rel', 'max_ref', 'shape_ok', 'passed'}], "
      "'rewrites': {...}, 'nodes_before', 'nodes_after'} (what `graphfuse verify` prints).");
}
