// Internal to io: ONNX protobuf <-> graphfuse conversions shared by import, export and tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "graphfuse/graph.h"
#include "io/write_pieces.h"

namespace graphfuse::onnx_io {

// Keys in Graph::properties() that carry ONNX model data through a round trip
// (docs/onnx.md lists them). Plain values so rules and tools can read and edit them.
inline constexpr std::string_view kIrVersion = "onnx.ir_version";              ///< int
inline constexpr std::string_view kOpsetDomains = "onnx.opset_domains";        ///< strings
inline constexpr std::string_view kOpsetVersions = "onnx.opset_versions";      ///< ints, parallel
inline constexpr std::string_view kProducerName = "onnx.producer_name";        ///< string
inline constexpr std::string_view kProducerVersion = "onnx.producer_version";  ///< string
inline constexpr std::string_view kModelDomain = "onnx.domain";                ///< string
inline constexpr std::string_view kModelVersion = "onnx.model_version";        ///< int
inline constexpr std::string_view kModelDoc = "onnx.doc_string";               ///< string
inline constexpr std::string_view kGraphName = "onnx.graph_name";              ///< string
inline constexpr std::string_view kGraphDoc = "onnx.graph_doc_string";         ///< string
/// Model metadata key prefix for graphfuse's own node attributes (`_rule`), written as
/// "graphfuse.attr:<node>:<attribute>" because ONNX Runtime rejects unknown attributes.
inline constexpr std::string_view kGraphfuseAttrPrefix = "graphfuse.attr:";
inline constexpr std::string_view kMetaKeys = "onnx.metadata_keys";            ///< strings
inline constexpr std::string_view kMetaValues = "onnx.metadata_values";        ///< strings, parallel
/// All graph input names in file order, including initializers declared as inputs.
inline constexpr std::string_view kInputOrder = "onnx.input_order";  ///< strings
inline constexpr std::string_view kNodeDocIds = "onnx.node_doc_ids";  ///< strings
inline constexpr std::string_view kNodeDocs = "onnx.node_docs";       ///< strings, parallel
/// ModelProto / GraphProto fields graphfuse does not interpret (local functions,
/// training info, quantization annotations, unknown fields), serialized.
inline constexpr std::string_view kModelRest = "onnx.model_rest";  ///< Opaque onnx.ModelProto
inline constexpr std::string_view kGraphRest = "onnx.graph_rest";  ///< Opaque onnx.GraphProto
/// Prefix for non-tensor value types (sequence, map, optional): key + value name.
inline constexpr std::string_view kTypePrefix = "onnx.type:";  ///< Opaque onnx.TypeProto

/// Opaque kinds used for attribute values graphfuse keeps but does not interpret.
inline constexpr std::string_view kOpaqueGraph = "onnx.GraphProto";
inline constexpr std::string_view kOpaqueSparse = "onnx.SparseTensorProto";
inline constexpr std::string_view kOpaqueType = "onnx.TypeProto";
/// The whole AttributeProto (GRAPHS, SPARSE_TENSORS, TYPE_PROTOS, string tensors, doc strings).
inline constexpr std::string_view kOpaqueAttribute = "onnx.AttributeProto";

/// "" for the default domain ("" or "ai.onnx"), else the domain itself.
std::string_view canonical_domain(std::string_view domain);

/// The opset version the graph imports for `domain` ("" = default ONNX), or -1.
std::int64_t opset_version(const Graph& g, std::string_view domain);

struct TensorSources;  // io/onnx_external.h
}  // namespace graphfuse::onnx_io
namespace graphfuse::io {
class MappedInput;  // io/mapped_input.h
}  // namespace graphfuse::io
namespace graphfuse::onnx_io {

/// Converts a TensorProto to a Tensor, taking raw_data by move (no copy of big tensors)
/// and converting typed fields (float_data, int64_data, ...) to raw bytes. External data
/// is read relative to `model_dir`. With `sources`, external data and the raw_data the
/// wire reader left in the mapped model file are views of the mapped files (copied only
/// when not aligned for the element type). `what` names the tensor in errors. Throws Error.
Tensor tensor_from_proto(onnx::TensorProto& t, const std::string& model_dir, const std::string& what,
                         TensorSources* sources = nullptr);
/// True when tensor_from_proto can represent `t` (numeric types, no segments).
bool tensor_supported(const onnx::TensorProto& t);
/// Writes `t` (which must have data) as raw_data; `what` names it in errors. With
/// `with_data` false everything but raw_data is written (the caller streams the bytes).
void tensor_to_proto(const Tensor& t, onnx::TensorProto& out, const std::string& what, bool with_data = true);

/// TypeProto tensor type -> ValueType; false when the type is not a tensor.
bool value_type_from_proto(const onnx::TypeProto& tp, ValueType& out);
void value_type_to_proto(const ValueType& vt, onnx::TypeProto& out);

/// AttributeProto -> AttrValue; `what` names the node and attribute in errors.
AttrValue attribute_from_proto(onnx::AttributeProto& a, const std::string& model_dir, const std::string& what);
/// AttrValue -> AttributeProto named `name`; `what` names the node in errors.
void attribute_to_proto(const std::string& name, const AttrValue& v, onnx::AttributeProto& out,
                        const std::string& what);

/// Adds to `out` the value names `g` reads from enclosing scopes (through nested
/// subgraphs too): the outer values an If/Loop/Scan body depends on without an edge.
void subgraph_outer_names(const onnx::GraphProto& g, std::unordered_set<std::string>& out);

/// ModelProto -> Graph. Consumes `model` (tensor bytes are moved out). `file` names the
/// source in errors; external data is resolved relative to `model_dir`. `sources` (may be
/// null) holds the mapped model file the wire reader parsed `model` from. The result validates.
Graph graph_from_model(onnx::ModelProto& model, const std::string& file, const std::string& model_dir,
                       TensorSources* sources = nullptr);
/// Graph -> ModelProto: nodes in topological order, initializers from Const nodes,
/// graph-level data from properties(). Throws Error naming the node on anything unwritable.
onnx::ModelProto model_from_graph(const Graph& g);

/// The .onnx file bytes for `g`: the same bytes as model_from_graph(g).SerializeAsString(),
/// but initializer data goes from the graph straight into the result, copied once.
/// Throws Error when the model would exceed protobuf's 2 GB.
std::string serialize_model(const Graph& g);

/// A model file as pieces to write in order: views into `owned` and into the graph's tensors.
struct ModelPieces {
  std::deque<std::string> owned;
  std::vector<std::string_view> pieces;
  /// Parallel to `pieces`: where a piece is in a mapped input file too (tensor bytes
  /// viewing it), so writing copies it file to file.
  std::vector<PieceSource> sources;
  std::uint64_t size = 0;
};
/// Decides where one initializer's bytes go: false = inline (raw_data); true = elsewhere,
/// after setting `head`'s data_location and external_data.
using PlaceInitializer = std::function<bool(const Tensor& t, onnx::TensorProto& head)>;
/// The model as pieces (no size limit checked); `place` may be empty (everything inline).
ModelPieces serialize_model_pieces(const Graph& g, const PlaceInitializer& place);
/// Writes the model at `path` and its external data file(s) beside it (onnx_external.cpp).

/// Parses a .onnx file (up to 2 GB). Throws Error naming the file.
onnx::ModelProto read_model_proto(const std::string& path);
/// Parses the mapped .onnx `file` (named `path` in errors), leaving the raw_data of big
/// initializers in the file: `sources.raw` says where (onnx_wire.h). Throws Error.
onnx::ModelProto parse_mapped_model(const io::MappedInput& file, const std::string& path, TensorSources& sources);

}  // namespace graphfuse::onnx_io
