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

}  // namespace graphfuse::onnx_io

namespace graphfuse {

void prepare_onnx_schemas() {
  // Any lookup makes libonnx register every schema (a function-local static: concurrent
  // lookups wait for it).
  (void)onnx::OpSchemaRegistry::Schema("Relu", 14, "");
}

}  // namespace graphfuse
