// The executor: a prepared plan per graph, then one kernel call per node in topological order.
#include "graphfuse/kernels/executor.h"

#include <chrono>
#include <exception>
#include <new>

#include "core/util.h"
#include "executor/epilogue_fusion.h"
#include "executor/node_errors.h"
#include "executor/random_data.h"
#include "fast/impl_log.h"
#include "fast/layout.h"

namespace graphfuse::kernels {

struct Executor::Plan {
  struct Step {
    NodeId node;
    const KernelFn* kernel;  // null for Input and constant nodes
    LayoutSupport support;
    std::vector<bool> input_is_const;
    // What this node's kernel applies to its output for the nodes fused into it
    // (epilogue_fusion.h).
    std::optional<Epilogue> epilogue;
    // A fused-away node: takes this node's output as its own, no kernel call.
    NodeId forward_from = kNoNode;
  };
  std::vector<Step> steps;
  std::vector<std::vector<Tensor>> constants;  // per NodeId, filled for constant nodes
  std::vector<int> uses;                       // per NodeId: node-input uses of its outputs
  std::vector<bool> pinned;                    // per NodeId: constant or graph output
};

namespace {

// The tensor a constant node stands for, with seeded random data when it has none.
Tensor constant_data(const Graph& g, NodeId id, std::uint64_t seed) {
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
  if (shape.empty() && !value && !n.attrs.has("shape")) fail("constant has neither data nor a shape");
  if (value && value->dtype != DType::Float32)
    fail("cannot make random data of type " + std::string(dtype_name(value->dtype)));
  return random_tensor(seed, n.id, shape, role_of_constant(g, id, shape));
}

// constant_data, with its errors (a shape from the file too large to allocate, a bad ONNX
// Constant) naming the node and where it was written.
Tensor materialize_constant(const Graph& g, NodeId id, std::uint64_t seed) {
  try {
    return constant_data(g, id, seed);
  } catch (const Error& e) {
    throw node_error(g, g.node(id), e.message());
  } catch (const std::bad_alloc&) {
    throw node_error(g, g.node(id), "out of memory making the constant's data");
  }
}

// Values with their physical layouts, for the channels-last mode.
struct Values {
  std::vector<std::vector<Tensor>> t;
  std::vector<std::vector<Layout>> layout;

  Layout layout_of(ValueRef v) const {
    return v.port < layout[v.node].size() ? layout[v.node][v.port] : Layout::Plain;
  }
  // Converts v in place (every later consumer sees the new layout).
  void convert(ValueRef v, Layout to) {
    if (layout_of(v) == to || v.port >= t[v.node].size()) return;
    Tensor& x = t[v.node][v.port];
    x = fast::convert_layout(x, layout_of(v), to);
    layout[v.node].resize(t[v.node].size(), Layout::Plain);
    layout[v.node][v.port] = to;
  }
};

// A 4-D tensor the channels-last mode may lay out either way: float32 activations, and the
// uint8 / int8 activations of quantized models.
bool is_activation4d(const Tensor* x) {
  return x && x->shape.size() == 4 &&
         (x->dtype == DType::Float32 || x->dtype == DType::UInt8 || x->dtype == DType::Int8);
}

// An operand whose bytes are the same in NCHW and NHWC and which broadcasts per channel (or
// as a scalar) against a 4-D activation: one element, or [N, C, 1, 1] / [C, 1, 1]. A
// squeeze-and-excitation scale or a per-channel bias, which must not send the activation
// back to NCHW.
bool layout_free(const Tensor* x) {
  if (!x) return true;
  const auto& s = x->shape;
  return x->num_elements() == 1 || (s.size() == 4 && s[2] == 1 && s[3] == 1) || (s.size() == 3 && s[1] == 1 && s[2] == 1);
}

// Brings n's inputs into layouts its kernel accepts (see LayoutSupport).
void fit_layouts(const Node& n, LayoutSupport support, Values& vals, KernelCall& call) {
  const auto& ins = n.inputs;
  if (support == LayoutSupport::ChannelsLast) {
    // Input 0 as it is, unless quantized (these kernels know float32 in NHWC only); a
    // residual input (Z) joins the output's layout.
    if (!ins.empty() && ins[0].valid() && call.inputs[0] && call.inputs[0]->dtype != DType::Float32)
      vals.convert(ins[0], Layout::Plain);
    for (std::size_t k = 1; k < ins.size(); ++k)
      if (ins[k].valid() && is_activation4d(call.inputs[k]) && !call.is_const(k)) vals.convert(ins[k], Layout::ChannelsLast);
    call.prefer_channels_last = true;
  } else if (support == LayoutSupport::ChannelsLastAnyType) {
    // Input 0 as it is, whatever its type; everything else Plain.
    for (std::size_t k = 1; k < ins.size(); ++k)
      if (ins[k].valid()) vals.convert(ins[k], Layout::Plain);
    call.prefer_channels_last = true;
  } else if (support == LayoutSupport::Elementwise) {
    const Tensor* first_cl = nullptr;
    for (std::size_t k = 0; k < ins.size(); ++k)
      if (ins[k].valid() && vals.layout_of(ins[k]) == Layout::ChannelsLast) first_cl = call.inputs[k];
    bool same = first_cl != nullptr;
    for (std::size_t k = 0; same && k < ins.size(); ++k)
      if (const Tensor* x = call.inputs[k]; x && x->shape != first_cl->shape && !layout_free(x)) same = false;
    // Same-shape operands, with scalars or per-channel vectors: go channels-last together
    // (the kernel broadcasts on the physical NHWC shapes).
    for (std::size_t k = 0; k < ins.size(); ++k)
      if (ins[k].valid() && is_activation4d(call.inputs[k]) &&
          !(same && call.inputs[k]->shape != first_cl->shape && layout_free(call.inputs[k])) &&
          call.inputs[k]->num_elements() != 1)
        vals.convert(ins[k], same ? Layout::ChannelsLast : Layout::Plain);
  } else {
    for (const ValueRef& in : ins)
      if (in.valid()) vals.convert(in, Layout::Plain);
  }
  // Conversions replaced tensors: re-point the call and record the layouts.
  call.layouts.clear();
  for (std::size_t k = 0; k < ins.size(); ++k) {
    call.layouts.push_back(ins[k].valid() ? vals.layout_of(ins[k]) : Layout::Plain);
    if (ins[k].valid()) call.inputs[k] = &vals.t[ins[k].node][ins[k].port];
  }
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
    Plan::Step step{id, nullptr, reg.layout_support(n.op.name()), {}, std::nullopt, kNoNode};
    if (is_constant(g, {id, 0})) {
      plan_->constants[id] = {materialize_constant(g, id, options_.seed)};
      plan_->pinned[id] = true;
    } else if (n.op != kInput) {
      step.kernel = reg.find(n.op.name());
      if (!step.kernel)
        throw Error(node_loc(g, n), "no kernel for op '" + std::string(n.op.name()) + "' (node '" + n.id +
                                        "') in the " + std::string(kernel_set_name(options_.set)) +
                                        " kernel set");
      for (const ValueRef& in : n.inputs) {
        step.input_is_const.push_back(in.valid() && is_constant(g, in));
        if (in.valid()) ++plan_->uses[in.node];
      }
    }
    plan_->steps.push_back(std::move(step));
  }
  if (options_.set == KernelSet::Fast && options_.fuse_epilogues) fuse_epilogues(g, reg);
}

// The per-channel affine of a BatchNormalization whose four parameters are constants of one
// length; false (not fused) otherwise.
bool Executor::norm_epilogue(const Node& bn, Epilogue& e) const {
  const Tensor* p[4];
  for (std::size_t i = 0; i < 4; ++i) {
    const ValueRef in = bn.inputs[i + 1];
    if (!in.valid() || plan_->constants[in.node].empty() || in.port != 0) return false;
    p[i] = &plan_->constants[in.node][0];
    if (p[i]->dtype != DType::Float32 || !p[i]->has_data() || p[i]->shape.size() != 1 ||
        p[i]->shape != p[0]->shape)
      return false;
  }
  const std::int64_t ch = p[0]->shape[0];
  e.mul.resize(static_cast<std::size_t>(ch));
  e.add.resize(static_cast<std::size_t>(ch));
  batch_norm_factors(p[0]->as<float>(), p[1]->as<float>(), p[2]->as<float>(), p[3]->as<float>(),
                     attr_float(bn.attrs, "epsilon", 1e-5f), ch, e.mul.data(), e.add.data());
  return true;
}

void Executor::fuse_epilogues(const Graph& g, const KernelRegistry& reg) {
  std::vector<std::size_t> step_of(g.capacity(), 0);
  for (std::size_t i = 0; i < plan_->steps.size(); ++i) step_of[plan_->steps[i].node] = i;
  for (const EpilogueFusion& f : find_epilogue_fusions(g)) {
    Plan::Step& reader = plan_->steps[step_of[f.reader]];
    // The node whose kernel computes the producer's value: itself, or the one it was fused into.
    NodeId root = f.producer;
    while (plan_->steps[step_of[root]].forward_from != kNoNode) root = plan_->steps[step_of[root]].forward_from;
    Plan::Step& producer = plan_->steps[step_of[root]];
    if (!producer.kernel || !reader.kernel) continue;  // a constant producer: nothing runs
    Epilogue e = producer.epilogue.value_or(Epilogue{});
    if (e.act.kind != Activation::None) continue;  // nothing follows an activation
    if (f.act.kind != Activation::None) {
      e.act = f.act;
    } else if (!e.mul.empty() || !norm_epilogue(g.node(f.reader), e)) {
      continue;
    }
    if (!accepts(reg.epilogue_support(g.node(root).op.name()), e)) continue;
    producer.epilogue = std::move(e);
    reader.forward_from = f.producer;
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
  const bool channels_last = options_.set == KernelSet::Fast && options_.channels_last;
  Values vals{std::vector<std::vector<Tensor>>(cap), std::vector<std::vector<Layout>>(cap)};
  auto& values = vals.t;
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
    if (step.forward_from != kNoNode) {
      // The node ran in its producer, whose only reader it is: its output is the producer's.
      values[step.node] = std::move(values[step.forward_from]);
      vals.layout[step.node] = std::move(vals.layout[step.forward_from]);
      uses[step.forward_from] = 0;
      if (profile) profile->nodes.push_back({step.node, std::string(n.op.name()), 0.0});
      continue;
    }
    KernelCall call(n.id, n.op.name(), n.attrs, n.outputs.size());
    call.input_is_const = step.input_is_const;
    if (step.epilogue) call.epilogue = &*step.epilogue;
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const ValueRef& in = n.inputs[k];
      if (!in.valid()) {
        call.inputs.push_back(nullptr);
        continue;
      }
      const auto& produced = values[in.node];
      if (in.port >= produced.size())
        throw node_error(g_, n, "input " + std::to_string(k) + " (" + g_.value_name(in) + ") was not produced");
      call.inputs.push_back(&produced[in.port]);
    }
    const auto t0 = Clock::now();
    try {
      if (channels_last) fit_layouts(n, step.support, vals, call);
      fast::NodeScope scope(n.id, n.op.name());  // lets a reference fall-back name the node
      values[step.node] = (*step.kernel)(call);
      if (observer_) observer_(n, call, values[step.node]);
      auto& lay = vals.layout[step.node];
      lay.assign(values[step.node].size(), Layout::Plain);
      for (std::size_t k = 0; k < lay.size(); ++k) {
        const auto& sh = values[step.node][k].shape;
        // 1x1 planes or one channel: both orders are the same bytes, call it Plain.
        if (call.out_layout == Layout::ChannelsLast && sh.size() == 4 && sh[1] > 1 && sh[2] * sh[3] > 1)
          lay[k] = Layout::ChannelsLast;
      }
    } catch (const Error& e) {
      throw node_error(g_, n, e.message());
    } catch (const std::exception& e) {
      // Kernels throw only Error (the registry converts); a layout conversion may not.
      throw node_error(g_, n, e.what());
    }
    if (profile)
      profile->nodes.push_back(
          {step.node, std::string(n.op.name()),
           std::chrono::duration<double, std::milli>(Clock::now() - t0).count()});
    // Free intermediates as soon as their last consumer ran (models hold many).
    for (const ValueRef& in : n.inputs)
      if (in.valid() && --uses[in.node] == 0 && !plan_->pinned[in.node]) values[in.node].clear();
  }
  for (const ValueRef& o : g_.outputs()) vals.convert(o, Layout::Plain);
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
