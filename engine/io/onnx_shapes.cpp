// ONNX shape inference at import (see onnx_shapes.h): libonnx infers, the file stays as it was.
#include "io/onnx_shapes.h"

#include "graphfuse/onnx.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>
#include <unordered_map>
#include <unordered_set>

namespace graphfuse::onnx_io {

namespace {

// libonnx 1.12's data propagation dereferences the type of a Shape node's input without
// checking it (SIGSEGV): an input whose type inference could not give, downstream of an op
// it has no schema for (a com.microsoft FusedMatMul a rule made, feeding Shape in a
// dynamic-axis export). Such models are inferred without data propagation; graphfuse's
// symbolic pass (onnx_sym_infer.h) follows the Shape chains instead.
bool data_propagation_safe(const onnx::ModelProto& model) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? std::string() : o.domain()] = static_cast<int>(o.version());
  for (const auto& n : model.graph().node()) {
    const std::string domain = n.domain() == "ai.onnx" ? std::string() : n.domain();
    auto it = opsets.find(domain);
    if (it == opsets.end() || !onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain)) return false;
  }
  return true;
}

}  // namespace

std::vector<InferredType> infer_value_types(onnx::ModelProto& model, std::string* failure) {
  std::vector<InferredType> out;
  if (!model.has_graph()) return out;
  onnx::GraphProto& gp = *model.mutable_graph();
  std::unordered_set<std::string> declared;
  for (const auto* list : {&gp.input(), &gp.output(), &gp.value_info()})
    for (const auto& vi : *list)
      if (vi.has_type()) declared.insert(vi.name());
  // Inference appends to value_info and merges into typed outputs; the file's own lists
  // (small: names and types, no tensor data) are put back afterwards so export is unchanged.
  const auto inputs = gp.input();
  const auto outputs = gp.output();
  const auto value_info = gp.value_info();
  // Subgraph bodies (If/Loop/Scan) get value_info too, in place; graphfuse keeps them as
  // opaque bytes, so their attributes are saved and restored as well.
  std::vector<std::pair<onnx::AttributeProto*, onnx::AttributeProto>> bodies;
  for (auto& n : *gp.mutable_node())
    for (auto& a : *n.mutable_attribute())
      if (a.has_g() || a.graphs_size() > 0) bodies.emplace_back(&a, a);
  try {
    // check_type off, error_mode 0: a node ONNX cannot type is skipped, not an error
    // (ONNX Runtime runs models whose every node ONNX's own inference cannot follow).
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, data_propagation_safe(model)));
    for (const auto& vi : gp.value_info())
      if (vi.has_type() && !declared.count(vi.name())) out.emplace_back(vi.name(), vi.type());
  } catch (const std::exception& e) {
    out.clear();
    if (failure) *failure = e.what();
  }
  *gp.mutable_input() = inputs;
  *gp.mutable_output() = outputs;
  *gp.mutable_value_info() = value_info;
  for (auto& [attr, saved] : bodies) attr->Swap(&saved);
  return out;
}

bool own_pass_covers(std::string_view op, std::size_t inputs, std::size_t outputs) {
  // The ONNX ops whose every output the symbolic pass (onnx_sym_ops.cpp) types from typed
  // inputs as libonnx would, with the input and output counts their schemas allow (the
  // pass reads inputs by position and checks nothing: a node outside them, which libonnx
  // would reject, is left to libonnx). Kept to what CNN exports and their rewrites use; a
  // model with anything else takes libonnx's whole-model inference.
  struct Arity {
    std::uint8_t min_in, max_in, max_out;
  };
  static const std::unordered_map<std::string_view, Arity> kCovered = {
      {"Conv", {2, 3, 1}}, {"MaxPool", {1, 1, 2}}, {"AveragePool", {1, 1, 1}},
      {"GlobalAveragePool", {1, 1, 1}}, {"GlobalMaxPool", {1, 1, 1}}, {"BatchNormalization", {5, 5, 1}},
      {"Relu", {1, 1, 1}}, {"LeakyRelu", {1, 1, 1}}, {"Clip", {1, 3, 1}}, {"Sigmoid", {1, 1, 1}},
      {"HardSigmoid", {1, 1, 1}}, {"HardSwish", {1, 1, 1}}, {"Tanh", {1, 1, 1}}, {"Softmax", {1, 1, 1}},
      {"Identity", {1, 1, 1}}, {"Dropout", {1, 3, 2}}, {"Add", {2, 2, 1}}, {"Sub", {2, 2, 1}},
      {"Mul", {2, 2, 1}}, {"Div", {2, 2, 1}}, {"Sqrt", {1, 1, 1}}, {"Concat", {1, 255, 1}},
      {"Flatten", {1, 1, 1}}, {"Gemm", {2, 3, 1}}, {"MatMul", {2, 2, 1}}, {"Reshape", {2, 2, 1}},
      {"Transpose", {1, 1, 1}}, {"Shape", {1, 1, 1}}, {"Gather", {2, 2, 1}}, {"Unsqueeze", {1, 2, 1}},
      {"Squeeze", {1, 2, 1}}, {"Constant", {0, 0, 1}}, {"ReduceMean", {1, 2, 1}}, {"Pad", {1, 4, 1}}};
  auto it = kCovered.find(op);
  return it != kCovered.end() && inputs >= it->second.min_in && inputs <= it->second.max_in && outputs >= 1 &&
         outputs <= it->second.max_out;
}

bool own_inference_suffices(const onnx::ModelProto& model) {
  if (!model.has_graph() || model.graph().node_size() == 0) return false;
  int opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  if (opset < 7) return false;
  const onnx::GraphProto& gp = model.graph();
  std::unordered_set<std::string> initializers;
  for (const auto& t : gp.initializer()) initializers.insert(t.name());
  for (const auto& vi : gp.input()) {
    if (initializers.count(vi.name())) continue;
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape() ||
        vi.type().tensor_type().elem_type() != onnx::TensorProto::FLOAT)
      return false;
  }
  for (const auto& n : gp.node()) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") ||
        !own_pass_covers(n.op_type(), static_cast<std::size_t>(n.input_size()), static_cast<std::size_t>(n.output_size())))
      return false;
    for (const auto& a : n.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) return false;
      if (a.name() == "auto_pad" && a.s() != "NOTSET") return false;
    }
  }
  return true;
}

}  // namespace graphfuse::onnx_io

namespace graphfuse {

void prepare_onnx_schemas() {
  // Any lookup makes libonnx register every schema (a function-local static: concurrent
  // lookups wait for it).
  (void)onnx::OpSchemaRegistry::Schema("Relu", 14, "");
}

}  // namespace graphfuse
