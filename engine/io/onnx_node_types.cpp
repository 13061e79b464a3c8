// Per-node ONNX type inference for the nodes rewrites create: each op's libonnx inference
// function, run on the node with its inputs' types, so a value a rule made has the type
// ONNX's own shape inference would give it.
#include "io/onnx_node_types.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "io/onnx_contrib_types.h"
#include "io/onnx_convert.h"
#include "io/onnx_shapes.h"
#include "io/onnx_sym_infer.h"
#include "graph/const_facts.h"

namespace graphfuse::onnx_io {

int conv_weight_input(std::string_view domain, std::string_view op) {
  if (!canonical_domain(domain).empty()) return -1;
  if (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger") return 1;
  if (op == "QLinearConv") return 3;
  return -1;
}

namespace {

// One node as libonnx's InferenceContext: attributes from the NodeProto, input types from
// the producers, and a constant input's value converted only when the inference function
// asks for it (Reshape asks for its shape; a Conv never for its weight).
class NodeContext final : public onnx::InferenceContext {
 public:
  NodeContext(const Graph& g, const Node& n, const onnx::NodeProto& proto, std::vector<std::optional<onnx::TypeProto>> inputs)
      : g_(g), n_(n), inputs_(std::move(inputs)), data_(n.inputs.size()), outputs_(n.outputs.size()) {
    for (const auto& a : proto.attribute()) attrs_.emplace_back(&a);
  }

  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    for (const auto* a : attrs_)
      if (a->name() == name) return a;
    return nullptr;
  }
  size_t getNumInputs() const override { return inputs_.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    return i < inputs_.size() && inputs_[i] ? &*inputs_[i] : nullptr;
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    if (i >= data_.size()) return nullptr;
    if (!data_[i]) {
      const Tensor* t = constant_tensor(g_, n_.inputs[i]);
      if (!t || !t->data) return nullptr;
      data_[i].emplace();
      try {
        tensor_to_proto(*t, *data_[i], "input " + std::to_string(i));
      } catch (const Error&) {
        data_[i].reset();
        return nullptr;
      }
    }
    return &*data_[i];
  }
  size_t getNumOutputs() const override { return outputs_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override { return i < outputs_.size() ? &outputs_[i] : nullptr; }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override { return nullptr; }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }

  const onnx::TypeProto& output(std::size_t k) const { return outputs_[k]; }

 private:
  const Graph& g_;
  const Node& n_;
  std::vector<const onnx::AttributeProto*> attrs_;
  std::vector<std::optional<onnx::TypeProto>> inputs_;
  mutable std::vector<std::optional<onnx::TensorProto>> data_;
  std::vector<onnx::TypeProto> outputs_;
};

bool untyped(const OutputInfo& o) { return o.type.dtype == DType::Undefined && !o.type.shape_known; }

// Listed with the types inferred at import: export writes no value_info for them, so a
// rewritten model's file is what it was before created values had types, and applying
// the rules to it again gives the same bytes (import infers the same types again).
void record_inferred(Graph& g, std::string name) {
  const std::string key(kInferredValues);
  if (auto* v = g.properties().find(key)) {
    if (auto* names = std::get_if<std::vector<std::string>>(v)) {
      names->push_back(std::move(name));
      return;
    }
  }
  g.properties().set(key, std::vector<std::string>{std::move(name)});
}

class OnnxTypeInference final : public TypeInference {
 public:
  explicit OnnxTypeInference(std::vector<std::pair<std::string, int>> opsets) : opsets_(std::move(opsets)) {}

  void infer(Graph& g, NodeId id) const override {
    const Node& n = g.node(id);
    bool any = false;
    for (const OutputInfo& o : n.outputs) any = any || untyped(o);
    if (!any) return;
    std::vector<std::size_t> typed;
    if (infer_contrib_types(g, id, typed)) {
      for (std::size_t k : typed) record_inferred(g, g.value_name(ValueRef{id, static_cast<std::uint32_t>(k)}));
      return;
    }
    // graphfuse's own constants (a rule's literal) are no ONNX op: their value is their
    // type, and asking libonnx for a schema would only build its registry.
    if (n.op.name() == ops::kConst) return;
    const std::string domain(canonical_domain(n.op.domain()));
    const int version = opset(domain);
    // The ops the symbolic pass types as libonnx does (own_inference_suffices) are typed
    // without libonnx: a model imported by that pass has no schema registry built, and
    // building it would cost a small model's rewrite more than the rewrite itself.
    if (domain.empty() && own_pass_covers(n.op.local_name(), n.inputs.size(), n.outputs.size())) {
      if (auto typed = sym::infer_created_completely(g, id)) {
        for (std::uint32_t k : *typed) record_inferred(g, g.value_name(ValueRef{id, k}));
        return;
      }
    }
    std::vector<std::uint32_t> fresh;
    // A node libonnx has a schema for but cannot type is invalid (or its inputs are not
    // typed): it stays untyped. Otherwise graphfuse's own pass fills in the com.microsoft
    // ops libonnx has no schema for and the symbolic dims it leaves unknown (docs/shapes.md).
    if (version >= 0 && !infer_libonnx(g, id, domain, version, fresh)) return;
    std::vector<std::uint32_t> more = sym::infer_created(g, id, fresh);
    for (std::uint32_t k : more)
      if (std::find(fresh.begin(), fresh.end(), k) == fresh.end())
        record_inferred(g, g.value_name(ValueRef{id, k}));
  }

 private:
  // libonnx's inference function of the op's schema, on n's untyped outputs; the ports it
  // typed go to `fresh`. False when the op has a schema and the node could not be typed.
  static bool infer_libonnx(Graph& g, NodeId id, const std::string& domain, int version,
                            std::vector<std::uint32_t>& fresh) {
    const Node& n = g.node(id);
    const std::string op(n.op.local_name());
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, version, domain);
    if (!schema || schema->Deprecated() || !schema->has_type_and_shape_inference_function()) return true;

    // Every present input must have a known element type: inference functions read it.
    std::vector<std::optional<onnx::TypeProto>> inputs(n.inputs.size());
    std::vector<int> ranks(n.inputs.size(), -1);
    onnx::NodeProto proto;
    proto.set_op_type(op);
    if (!domain.empty()) proto.set_domain(domain);
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].valid()) {
        proto.add_input(std::string{});
        continue;
      }
      const ValueType vt = known_type(g, n.inputs[i]);
      if (vt.dtype == DType::Undefined) return false;
      if (vt.shape_known) ranks[i] = static_cast<int>(vt.shape.size());
      value_type_to_proto(vt, inputs[i].emplace());
      proto.add_input("i" + std::to_string(i));
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k) proto.add_output("o" + std::to_string(k));
    if (int w = conv_weight_input(domain, op); w >= 0) {
      auto wi = static_cast<std::size_t>(w);
      if (wi >= ranks.size() || ranks[0] < 0 || ranks[wi] != ranks[0]) return false;
    }
    for (const auto& [name, value] : n.attrs) {
      if (name.starts_with('_')) continue;  // graphfuse's own (`_rule`), not ONNX's
      // Subgraphs, sparse tensors, type protos: inference would need more than the node.
      if (std::holds_alternative<Opaque>(value)) return false;
      try {
        attribute_to_proto(name, value, *proto.add_attribute(), "node");
      } catch (const Error&) {
        return false;
      }
    }
    NodeContext ctx(g, n, proto, std::move(inputs));
    try {
      schema->Verify(proto);  // input counts, attribute kinds: what inference functions assume
      schema->GetTypeAndShapeInferenceFunction()(ctx);
    } catch (const std::exception&) {
      return false;  // ONNX cannot type it: the outputs stay unknown, as at import
    }
    for (std::size_t k = 0; k < n.outputs.size(); ++k) {
      if (!untyped(n.outputs[k])) continue;
      ValueType vt;
      if (!value_type_from_proto(ctx.output(k), vt) || (vt.dtype == DType::Undefined && !vt.shape_known)) continue;
      g.output_infos(id)[k].type = std::move(vt);
      record_inferred(g, g.value_name(ValueRef{id, static_cast<std::uint32_t>(k)}));
      fresh.push_back(static_cast<std::uint32_t>(k));
    }
    return true;
  }

 private:
  int opset(const std::string& domain) const {
    for (const auto& [d, v] : opsets_)
      if (d == domain) return v;
    return -1;
  }
  std::vector<std::pair<std::string, int>> opsets_;  // canonical domain -> version
};

}  // namespace

std::unique_ptr<const TypeInference> make_onnx_type_inference(const Graph& g) {
  const auto* domains = g.properties().get_if<std::vector<std::string>>(kOpsetDomains);
  const auto* versions = g.properties().get_if<std::vector<std::int64_t>>(kOpsetVersions);
  if (!domains || !versions || opset_version(g, "") < 0) return nullptr;
  std::vector<std::pair<std::string, int>> opsets;
  for (std::size_t i = 0; i < domains->size() && i < versions->size(); ++i)
    if ((*versions)[i] >= 1 && (*versions)[i] <= std::numeric_limits<int>::max())
      opsets.emplace_back(std::string(canonical_domain((*domains)[i])), static_cast<int>((*versions)[i]));
  return std::make_unique<OnnxTypeInference>(std::move(opsets));
}

}  // namespace graphfuse::onnx_io
