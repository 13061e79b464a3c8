// Output types of ONNX Runtime's transformer contrib ops (see onnx_contrib_types.h). The
// rules are ONNX Runtime's schema inference functions (contrib_defs.cc, bert_defs.cc),
// restated: the normalizations give the input's type, their statistics the input's shape
// with the normalized dims 1, EmbedLayerNormalization [batch, sequence, hidden] and an
// int32 mask index [batch].
#include "io/onnx_contrib_types.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "io/onnx_convert.h"
#include "graph/const_facts.h"

namespace graphfuse::onnx_io {

namespace {

enum class Kind { None, SameAsInput, Norm, SkipNorm, EmbedNorm };

Kind kind_of(std::string_view domain, std::string_view op) {
  if (domain.empty()) return op == "SimplifiedLayerNormalization" ? Kind::Norm : Kind::None;
  if (domain != "com.microsoft") return Kind::None;
  if (op == "SkipLayerNormalization" || op == "SkipSimplifiedLayerNormalization") return Kind::SkipNorm;
  if (op == "EmbedLayerNormalization") return Kind::EmbedNorm;
  if (op == "Gelu" || op == "FastGelu" || op == "BiasGelu" || op == "QuickGelu") return Kind::SameAsInput;
  return Kind::None;
}

ValueType input_type(const Graph& g, const Node& n, std::size_t i) {
  if (i >= n.inputs.size() || !n.inputs[i].valid()) return {};
  return known_type(g, n.inputs[i]);
}

// x's type with dims [from, rank) set to 1 (the per-row statistics of a normalization).
ValueType stat_type(const ValueType& x, std::int64_t from) {
  ValueType t = x;
  t.dtype = DType::Float32;
  if (!t.shape_known) return t;
  for (std::size_t d = static_cast<std::size_t>(std::max<std::int64_t>(from, 0)); d < t.shape.size(); ++d) {
    t.shape[d] = 1;
    if (d < t.dim_params.size()) t.dim_params[d].clear();
  }
  return t;
}

}  // namespace

bool infer_contrib_types(Graph& g, NodeId id, std::vector<std::size_t>& typed) {
  const Node& n = g.node(id);
  const Kind kind = kind_of(canonical_domain(n.op.domain()), n.op.local_name());
  if (kind == Kind::None) return false;
  const ValueType x = input_type(g, n, 0);
  if (x.dtype == DType::Undefined) return true;
  std::vector<ValueType> out(n.outputs.size());
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  switch (kind) {
    case Kind::SameAsInput:
      if (!out.empty()) out[0] = x;
      break;
    case Kind::Norm: {
      std::int64_t axis = -1;
      if (const auto* a = n.attrs.get_if<std::int64_t>("axis")) axis = *a;
      if (x.shape_known && axis < 0) axis += rank;
      for (std::size_t k = 0; k < out.size(); ++k) out[k] = k == 0 ? x : stat_type(x, x.shape_known ? axis : 0);
      if (!x.shape_known && out.size() > 1) out[1] = {};
      break;
    }
    case Kind::SkipNorm:
      for (std::size_t k = 0; k < out.size(); ++k)
        out[k] = (k == 0 || k == 3) ? x : (x.shape_known ? stat_type(x, rank - 1) : ValueType{});
      break;
    case Kind::EmbedNorm: {
      // input_ids [batch, sequence], word_embedding [vocab, hidden].
      const ValueType emb = input_type(g, n, 2);
      if (!x.shape_known || rank != 2 || !emb.shape_known || emb.shape.size() != 2) return true;
      if (!out.empty()) {
        out[0].dtype = emb.dtype;
        out[0].shape_known = true;
        out[0].shape = {x.shape[0], x.shape[1], emb.shape[1]};
        out[0].dim_params = {x.dim_params.size() > 0 ? x.dim_params[0] : "",
                             x.dim_params.size() > 1 ? x.dim_params[1] : "", ""};
      }
      if (out.size() > 1) {
        out[1].dtype = DType::Int32;
        out[1].shape_known = true;
        out[1].shape = {x.shape[0]};
        out[1].dim_params = {x.dim_params.empty() ? "" : x.dim_params[0]};
      }
      if (out.size() > 2) out[2] = out[0];  // embedding_sum
      break;
    }
    case Kind::None:
      break;
  }
  for (std::size_t k = 0; k < out.size(); ++k) {
    const OutputInfo& o = g.node(id).outputs[k];
    if (o.type.dtype != DType::Undefined || o.type.shape_known) continue;
    if (out[k].dtype == DType::Undefined && !out[k].shape_known) continue;
    // No symbolic dim: no dim_params at all, as import writes it.
    bool symbolic = false;
    for (const auto& p : out[k].dim_params) symbolic = symbolic || !p.empty();
    if (!symbolic) out[k].dim_params.clear();
    else out[k].dim_params.resize(out[k].shape.size());
    g.output_infos(id)[k].type = std::move(out[k]);
    typed.push_back(k);
  }
  return true;
}

std::size_t contrib_required_outputs(std::string_view domain, std::string_view op) {
  return canonical_domain(domain) == "com.microsoft" && op == "EmbedLayerNormalization" ? 2 : 1;
}

}  // namespace graphfuse::onnx_io
