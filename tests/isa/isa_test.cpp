// Every convolution, matmul and pooling call of the shared models (as imported, and after
// rules/onnx) through the fast kernels, under whichever oneDNN ISA the environment sets
// (ctest runs it with ONEDNN_MAX_CPU_ISA=AVX2 and =SSE41): fails when a primitive runs a
// oneDNN reference implementation (outside kExceptions) or when a call's result differs
// from the reference kernels'. Each distinct call (op, attributes, input shapes, layouts)
// is checked once, so the test takes seconds.
//   isa_test MODELS_DIR RULES_DIR      exit 0 pass, 1 fail, 77 skipped (no models)
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"
#include "graphfuse/kernels/fold.h"
#include "graphfuse/kernels/isa.h"
#include "graphfuse/kernels/kernel.h"
#include "graphfuse/rules.h"

namespace fs = std::filesystem;
namespace gk = graphfuse::kernels;
using graphfuse::Tensor;

namespace {

// Primitives allowed to run a reference implementation, with the reason. Empty: every
// convolution, matmul and pooling shape of the shared models has a jit kernel at AVX2
// and SSE4.1 in some layout the fast kernels try.
const std::map<std::string, std::string> kExceptions = {};

const std::set<std::string> kOps = {"Conv",        "com.microsoft.FusedConv",   "MatMul",
                                    "Gemm",        "com.microsoft.FusedMatMul", "com.microsoft.FusedGemm",
                                    "MaxPool",     "AveragePool",               "GlobalAveragePool",
                                    "GlobalMaxPool"};

// An NHWC-ordered 4-D tensor (logical shape NCHW) copied into NCHW order.
Tensor to_plain(const Tensor& t, gk::Layout layout) {
  if (t.dtype != graphfuse::DType::Float32 || !t.has_data()) return t;
  const float* p = t.as<float>();
  std::vector<float> v(p, p + t.num_elements());
  if (layout == gk::Layout::ChannelsLast && t.shape.size() == 4) {
    const std::int64_t n = t.shape[0], c = t.shape[1], hw = t.shape[2] * t.shape[3];
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < c; ++k)
        for (std::int64_t s = 0; s < hw; ++s) v[static_cast<std::size_t>((i * c + k) * hw + s)] = p[(i * hw + s) * c + k];
  }
  return Tensor::from_floats(t.shape, v);
}

std::string shape_of(const Tensor* t) {
  if (!t) return "-";
  std::string s;
  for (auto d : t->shape) s += std::to_string(d) + "x";
  return s;
}

// One distinct kernel call: its op, attributes, NCHW inputs and the fast kernels' NCHW outputs.
struct Call {
  std::string where;  // model and node, for the failure message
  std::string op;
  graphfuse::Attributes attrs;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::optional<gk::Epilogue> epilogue;  // what the executor's plan fused into the call
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: isa_test MODELS_DIR RULES_DIR\n");
    return 2;
  }
  const fs::path models = argv[1];
  const std::string rules_dir = argv[2];
  std::printf("oneDNN ISA: %s\n", gk::onednn_isa().c_str());
  std::vector<std::string> names;
  for (const char* m : {"resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"})
    if (fs::exists(models / (std::string(m) + ".onnx"))) names.push_back(m);
  if (names.empty()) {
    std::printf("skipped: no shared models in %s\n", models.string().c_str());
    return 77;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const graphfuse::RuleSet rules = graphfuse::load_rule_files({rules_dir});
  std::map<std::string, Call> calls;  // by signature
  int failures = 0;
  for (const std::string& m : names) {
    graphfuse::Graph g = graphfuse::load_graph((models / (m + ".onnx")).string());
    gk::materialize_constants(g, 0);
    graphfuse::Graph fused = g;
    gk::ReferenceFolder folder({gk::FoldScope::RuleCreated});
    graphfuse::rewrite_and_fold(fused, rules, {}, &folder);
    for (const graphfuse::Graph* graph : {&g, &fused}) {
      gk::ExecOptions opt;
      opt.set = gk::KernelSet::Fast;
      opt.threads = 1;
      gk::Executor ex(*graph, opt);
      ex.set_node_observer([&](const graphfuse::Node& n, const gk::KernelCall& c, const std::vector<Tensor>& outs) {
        if (!kOps.count(std::string(c.op))) return;
        std::string key = std::string(c.op) + "|";
        for (const auto& [name, value] : c.attrs) key += name + "=" + graphfuse::format_attr_value(value) + ";";
        for (std::size_t k = 0; k < c.inputs.size(); ++k)
          key += "|" + shape_of(c.inputs[k]) + (c.layout(k) == gk::Layout::ChannelsLast ? "L" : "P") +
                 (c.is_const(k) ? "c" : "");
        key += c.prefer_channels_last ? "|pcl" : "|";
        if (c.epilogue)
          key += "|epilogue " + std::to_string(static_cast<int>(c.epilogue->act.kind)) + " " +
                 std::to_string(c.epilogue->act.alpha) + " " + std::to_string(c.epilogue->mul.size());
        if (calls.count(key)) return;
        Call call{m + (graph == &g ? "" : " (fused)") + " node '" + n.id + "'", std::string(c.op), c.attrs, {}, {}, {}};
        if (c.epilogue) call.epilogue = *c.epilogue;
        for (std::size_t k = 0; k < c.inputs.size(); ++k) {
          if (!c.inputs[k]) {
            Tensor none;
            none.dtype = graphfuse::DType::Undefined;
            call.inputs.push_back(none);
          } else {
            call.inputs.push_back(to_plain(*c.inputs[k], c.layout(k)));
          }
        }
        for (const Tensor& o : outs) call.outputs.push_back(to_plain(o, c.out_layout));
        calls.emplace(key, std::move(call));
      });
      ex.run(gk::make_random_inputs(*graph, 0, opt));
    }
  }
  const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Which implementations oneDNN gave the fast kernels.
  std::map<std::string, int> impls;
  int checked_primitives = 0;
  for (const gk::PrimitiveRecord& r : gk::built_primitives()) {
    ++impls[r.primitive + " " + r.impl];
    ++checked_primitives;
    if (!gk::is_reference_impl(r.impl)) continue;
    if (auto it = kExceptions.find(r.primitive + " " + r.shape); it != kExceptions.end()) {
      std::printf("allowed  %s %s on %s: %s\n", r.primitive.c_str(), r.shape.c_str(), r.impl.c_str(), it->second.c_str());
      continue;
    }
    std::printf("FAIL     %s %s runs oneDNN's reference implementation %s\n", r.primitive.c_str(), r.shape.c_str(),
                r.impl.c_str());
    ++failures;
  }
  for (const auto& [impl, count] : impls) std::printf("  %3d x %s\n", count, impl.c_str());
  // What `graphfuse run` warns about: each reference run with the node that made it.
  const auto fallbacks = gk::reference_fallbacks();
  for (const gk::ReferenceFallback& f : fallbacks)
    std::printf("         node '%s' (%s) ran %s %s\n", f.node.c_str(), f.op.c_str(), f.primitive.primitive.c_str(),
                f.primitive.impl.c_str());
  if (failures && (fallbacks.empty() || fallbacks.front().node.empty())) {
    std::printf("FAIL     reference implementations ran but reference_fallbacks() names no node\n");
    ++failures;
  }
  if (checked_primitives == 0) {
    std::printf("FAIL     no oneDNN primitive was built: the fast kernels did not run\n");
    ++failures;
  }

  // Every distinct call against the reference kernels.
  const auto t1 = std::chrono::steady_clock::now();
  for (const auto& [key, c] : calls) {
    auto expected = gk::run_op(gk::KernelSet::Reference, c.op, c.inputs, c.attrs, c.outputs.size());
    if (c.epilogue) expected.at(0) = gk::apply_epilogue(expected.at(0), *c.epilogue);
    for (const gk::TensorDiff& d : gk::compare_outputs(c.outputs, expected, 1e-3, 1e-4)) {
      if (d.pass) continue;
      std::printf("FAIL     %s (%s): fast vs reference max_abs %.3g max_rel %.3g (output scale %.3g)\n",
                  c.where.c_str(), c.op.c_str(), d.max_abs, d.max_rel, d.max_ref);
      ++failures;
    }
  }
  const double ref_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::printf("%zu models, %d primitives, %zu distinct calls checked against the reference kernels "
              "(models %.1f s, reference %.1f s): %s\n",
              names.size(), checked_primitives, calls.size(), run_s, ref_s, failures ? "FAIL" : "PASS");
  return failures ? 1 : 0;
}
