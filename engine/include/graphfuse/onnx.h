// ONNX models <-> graphs: the graphfuse::onnx library (link it for .onnx in load_graph/save_graph).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse {

/// Reads an .onnx file. Initializers become Const nodes (attribute "value", data shared
/// not copied); domain-qualified ops are "domain.Op"; model-level data (opsets, metadata,
/// fields graphfuse does not interpret) rides in Graph::properties() for the way back.
/// Throws Error naming the file (and node) for anything it cannot represent.
Graph load_onnx(const std::string& path);
/// Builds libonnx's operator schema registry, which load_onnx's shape inference needs for
/// models beyond the CNN ops graphfuse types itself (docs/shapes.md) and libonnx builds on
/// first use (every opset of every op: ~42 million instructions, more than reading a 50 MB
/// model). Thread-safe: a program about to load such a model can run it on another thread
/// while it does other work.
void prepare_onnx_schemas();
/// Writes `g` as an .onnx file, atomically (temporary file beside it, then rename), with
/// default OnnxSaveOptions: the form the model was read in, external data above 2 GB.
void save_onnx(const Graph& g, const std::string& path);

/// How save_onnx lays out tensor bytes (docs/big-models.md).
struct OnnxSaveOptions {
  /// "" keeps the input's form (external when the model was read with external data, else
  /// inline; external anyway over protobuf's 2 GB). "inline": all bytes in the .onnx (an
  /// error over 2 GB). "external": initializers of `external_threshold` bytes or more go to
  /// "<output file name>.data" beside it. "same": tensors still holding the bytes read from
  /// the input's data files point back into them (nothing copied; the output must be in
  /// the input's folder and those files must stay), the others as for "external".
  std::string external_data;
  /// Smallest initializer (bytes) written externally; the onnx package's default too.
  std::uint64_t external_threshold = 1024;
};
void save_onnx(const Graph& g, const std::string& path, const OnnxSaveOptions& options);

/// The same from and to memory: a serialized ModelProto. `name` stands for the model in
/// error messages; external tensor data is resolved relative to `model_dir`.
Graph parse_onnx(std::string_view bytes, const std::string& name = "<onnx>",
                 const std::string& model_dir = ".");
/// The model's bytes: exactly what save_onnx writes.
std::string write_onnx(const Graph& g);

/// What raise_onnx_opset found and did.
struct OpsetRaise {
  std::int64_t from = 0;  ///< the ONNX opset the graph imported (0: none, not an ONNX graph)
  std::int64_t to = 0;    ///< the one it imports now (`from` when kept)
  /// Why it was kept below the version asked for: the first node whose op means something
  /// else there ("RoiAlign changed at opset 16 (node 'roi')"); "" when raised or not asked.
  std::string kept_by;
};
/// Raises the graph's import of ONNX's default domain to `version` where no node changes
/// meaning: every default-domain op in it (subgraphs included) has the same schema at both
/// versions, or changed only in steps libonnx's version converter calls compatible (types
/// added, optional attributes whose absence keeps the old meaning). Nothing is converted:
/// otherwise the graph stays as it is and `kept_by` says why. A graph importing `version`
/// or later, or no ONNX opset (another format), is left alone. The IR version goes up to
/// the one ONNX released `version` with where it is lower. Target profiles ask for it
/// (`raise_onnx_opset`, docs/cost-model.md) so rules guarded by `opset("") >= N` apply to
/// older exports.
OpsetRaise raise_onnx_opset(Graph& g, std::int64_t version);

}  // namespace graphfuse
