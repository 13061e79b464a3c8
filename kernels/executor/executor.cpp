// The executor: a prepared plan per graph, then one kernel call per node in topological order.
#include "graphfuse/kernels/executor.h"

#include <chrono>
#include <exception>

#include "core/util.h"
#include "executor/random_data.h"

namespace graphfuse::kernels {

struct Executor::Plan {
  struct Step {
    NodeId node;
    const KernelFn* kernel;  // null for Input and constant nodes
    std::vector<bool> input_is_const;
  };
  std::vector<Step> steps;
  std::vector<std::vector<Tensor>> constants;  // per NodeId, filled for constant nodes
  std::vector<int> uses;                       // per NodeId: node-input uses of its outputs
  std::vector<bool> pinned;                    // per NodeId: constant or graph output
};

namespace {

std::string where(const Node& n) {
  return "node '" + n.id + "' (" + std::string(n.op.name()) + ")";
}

// The tensor a constant node stands for, with seeded random data when it has none.
Tensor materialize_constant(const Graph& g, NodeId id, std::uint64_t seed) {
  const Node& n = g.node(id);
  const Tensor* value = n.attrs.get_if<Tensor>("value");
  if (value && value->has_data()) return *value;
  if (n.op.name() == "Constant") {
    // ONNX Constant with value_float(s) / value_int(s).
    return run_op(KernelSet::Reference, "Constant", {}, n.attrs).at(0);
  }
  Shape shape = value ? value->shape : Shape{};
  if (auto s = n.attrs.get_if<std::vector<std::int64_t>>("shape"); s && (shape.empty() || !value))
    shape = *s;
  if (shape.empty() && !value && !n.attrs.has("shape"))
    throw Error(n.loc, where(n) + ": constant has neither data nor a shape");
  if (value && value->dtype != DType::Float32)
    throw Error(n.loc, where(n) + ": cannot make random data of type " +
                           std::string(dtype_name(value->dtype)));
  return random_tensor(seed, n.id, shape, role_of_constant(g, id, shape));
}

}  // namespace

Executor::Executor(const Graph& g, ExecOptions options)
    : g_(g), options_(std::move(options)), plan_(std::make_unique<Plan>()) {
  const KernelRegistry& reg = registry(options_.set);
  static const OpType kInput = OpType::intern(ops::kInput);
  const NodeId cap = g.capacity();
  plan_->constants.resize(cap);
  plan_->uses.assign(cap, 0);
  plan_->pinned.assign(cap, false);
  for (const ValueRef& o : g.outputs()) plan_->pinned[o.node] = true;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    Plan::Step step{id, nullptr, {}};
    if (is_constant(g, {id, 0})) {
      plan_->constants[id] = {materialize_constant(g, id, options_.seed)};
      plan_->pinned[id] = true;
    } else if (n.op != kInput) {
      step.kernel = reg.find(n.op.name());
      if (!step.kernel)
        throw Error(n.loc, "no kernel for op '" + std::string(n.op.name()) + "' (node '" + n.id +
                               "') in the " + std::string(kernel_set_name(options_.set)) +
                               " kernel set");
      for (const ValueRef& in : n.inputs) {
        step.input_is_const.push_back(in.valid() && is_constant(g, in));
        if (in.valid()) ++plan_->uses[in.node];
      }
    }
    plan_->steps.push_back(std::move(step));
  }
}

Executor::~Executor() = default;

std::vector<Tensor> Executor::run(const std::vector<Tensor>& given, RunProfile* profile) {
  using Clock = std::chrono::steady_clock;
  ThreadScope threads(options_.threads);
  const std::vector<Tensor> random = given.empty() ? make_random_inputs(g_, options_.seed, options_)
                                                   : std::vector<Tensor>{};
  const std::vector<Tensor>& inputs = given.empty() ? random : given;
  if (inputs.size() != g_.inputs().size())
    throw Error("graph has " + std::to_string(g_.inputs().size()) + " inputs, " +
                std::to_string(inputs.size()) + " tensors given");
  const NodeId cap = g_.capacity();
  std::vector<std::vector<Tensor>> values(cap);
  for (std::size_t i = 0; i < inputs.size(); ++i) values[g_.inputs()[i]] = {inputs[i]};
  std::vector<int> uses = plan_->uses;
  if (profile) *profile = RunProfile{};
  const auto t_start = Clock::now();
  for (const Plan::Step& step : plan_->steps) {
    const Node& n = g_.node(step.node);
    if (!plan_->constants[step.node].empty()) {
      values[step.node] = plan_->constants[step.node];
      continue;
    }
    if (!step.kernel) continue;  // a graph input, already bound
    KernelCall call{n.id, n.op.name(), n.attrs, {}, step.input_is_const, n.outputs.size()};
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const ValueRef& in = n.inputs[k];
      if (!in.valid()) {
        call.inputs.push_back(nullptr);
        continue;
      }
      const auto& produced = values[in.node];
      if (in.port >= produced.size())
        throw Error(n.loc, where(n) + ": input " + std::to_string(k) + " (" + g_.value_name(in) +
                               ") was not produced");
      call.inputs.push_back(&produced[in.port]);
    }
    const auto t0 = Clock::now();
    try {
      values[step.node] = (*step.kernel)(call);
    } catch (const Error& e) {
      throw Error(n.loc, where(n) + ": " + e.message());
    } catch (const std::exception& e) {
      // oneDNN and the standard library throw their own types.
      throw Error(n.loc, where(n) + ": " + e.what());
    }
    if (profile)
      profile->nodes.push_back(
          {step.node, std::string(n.op.name()),
           std::chrono::duration<double, std::milli>(Clock::now() - t0).count()});
    // Free intermediates as soon as their last consumer ran (models hold many).
    for (const ValueRef& in : n.inputs)
      if (in.valid() && --uses[in.node] == 0 && !plan_->pinned[in.node]) values[in.node].clear();
  }
  if (profile) profile->total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_start).count();
  std::vector<Tensor> out;
  for (const ValueRef& o : g_.outputs()) {
    if (o.port >= values[o.node].size())
      throw Error("graph output " + g_.value_name(o) + " was not produced");
    out.push_back(values[o.node][o.port]);
  }
  return out;
}

std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs,
                              const ExecOptions& options, RunProfile* profile) {
  Executor ex(g, options);
  return ex.run(inputs, profile);
}

}  // namespace graphfuse::kernels
