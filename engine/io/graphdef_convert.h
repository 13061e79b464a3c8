// Internal to graphfuse::tf: TensorFlow GraphDef messages <-> Graph, shared by the .pb
// format (graphdef_file.cpp) and TF.js graph models (tfjs_model.cpp). docs/tensorflow.md
// describes the mapping.
#pragma once

#include <string>
#include <string_view>

#include "graphdef.pb.h"
#include "graphfuse/graph.h"

namespace graphfuse::tf_io {

// Node attributes that carry NodeDef fields which are not TF attributes. Dotted names
// cannot clash with TensorFlow's (an attr name is [A-Za-z_][A-Za-z0-9_]*).
inline constexpr std::string_view kDevice = "tf.device";                ///< string
inline constexpr std::string_view kControlInputs = "tf.control_inputs";  ///< strings (names, no '^')
/// A TF1 while loop's Merge: the NextIteration inputs that close the loop, each
/// "POSITION INPUT" (the graph holds no cycle; they are written back where they were).
inline constexpr std::string_view kBackEdges = "tf.back_edges";  ///< strings
/// A TF.js weight's quantization as written in the manifest (JSON text); on a Const.
inline constexpr std::string_view kTfjsQuantization = "tfjs.quantization";
/// The dtype a TF.js topology wrote on a Const's tensor when it differs from its weight's
/// (a DT_DOUBLE constant stored as a float32 weight); int, the DataType number.
inline constexpr std::string_view kTfjsTopologyDtype = "tfjs.topology_dtype";
/// Opaque kind of a TF attribute graphfuse keeps without interpreting (type, shape, func,
/// lists of those): the serialized AttrValue.
inline constexpr std::string_view kOpaqueAttr = "tf.AttrValue";
/// Opaque kind of a tensor graphfuse has no element type for (complex, quantized, string,
/// resource, variant): the serialized TensorProto.
inline constexpr std::string_view kOpaqueTensor = "tf.TensorProto";

// Graph properties.
inline constexpr std::string_view kVersions = "tf.versions";  ///< Opaque tf.VersionDef
inline constexpr std::string_view kLibrary = "tf.library";    ///< Opaque tf.FunctionDefLibrary
inline constexpr std::string_view kVersion = "tf.version";    ///< int (GraphDef.version)
/// The names of the graph outputs as read (the sinks' node names), in order: a rule that
/// removes an output node (an Identity) must not change the names a user fetches.
inline constexpr std::string_view kOutputNames = "tf.output_names";  ///< strings
/// GraphDef fields graphfuse does not declare, serialized.
inline constexpr std::string_view kGraphRest = "tf.graph_rest";

/// The Graph for a GraphDef (which it consumes). Placeholder nodes become graph inputs;
/// nodes whose outputs nothing reads become graph outputs. `file` names errors.
Graph graphdef_to_graph(tf::GraphDef& gd, const std::string& file);
/// The GraphDef for a graph; nodes in the graph's order (the file's, for a graph read
/// from one). Throws Error for what a GraphDef cannot hold.
tf::GraphDef graph_to_graphdef(const Graph& g);

/// The element bytes of a TensorProto (tensor_content, or the typed fields expanded, a
/// short list repeating its last value as TensorFlow does); false when `t` has no element
/// type graphfuse reads or its data does not fit its shape (then `why` says what).
bool tensor_bytes(const tf::TensorProto& t, DType& dtype, std::vector<std::int64_t>& shape, std::string& bytes,
                  std::string& why);
/// DT_* <-> DType; Undefined / DT_INVALID where there is no counterpart.
DType dtype_from_tf(tf::DataType t);
tf::DataType dtype_to_tf(DType t);

}  // namespace graphfuse::tf_io
