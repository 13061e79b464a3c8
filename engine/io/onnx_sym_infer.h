// Internal to io: graphfuse's own symbolic shape inference for ONNX graphs (docs/shapes.md).
//
// libonnx's inference gives up on dynamic-axis exports at the first Reshape or Slice whose
// shape or bounds are computed at run time (Shape -> Gather -> Unsqueeze -> Concat), and
// every shape after it is unknown. This pass follows those chains: a dimension is a number or
// an expression over symbols (shape::SymDim), and the small int tensors that shape chains
// compute are tracked element by element as such dimensions, so Reshape(x, Concat(Shape(x)[0],
// Shape(x)[1], 12, 64)) gets [batch, seq, 12, 64].
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphfuse/graph.h"
#include "shape/sym_dim.h"

namespace graphfuse::onnx_io::sym {

using shape::Dim;
using shape::SymDim;

/// A shape: unknown rank (known false), or one Dim per axis.
struct Shape {
  bool known = false;
  std::vector<Dim> dims;
  static Shape of(std::vector<Dim> d) { return Shape{true, std::move(d)}; }
};

/// What the pass infers for one output.
struct OutType {
  DType dtype = DType::Undefined;
  Shape shape;
};

/// Elements of a small integer tensor (row-major), each a Dim.
using Elems = std::vector<Dim>;

/// Shape <-> ValueType (dims: number >= 0, symbolic -1 with its text in dim_params,
/// unknown -1 with no text).
Shape shape_of(const ValueType& t);
void set_shape(ValueType& t, const Shape& s);

/// The facts a node's inference reads: its inputs' types and the elements of small integer
/// inputs (constants, or computed by shape chains), remembered per value.
class Context {
 public:
  explicit Context(const Graph& g);
  const Graph& graph() const { return g_; }
  std::int64_t opset() const { return opset_; }
  DType dtype(ValueRef v) const;
  Shape shape(ValueRef v) const;
  /// The elements of v when v is a small integer tensor whose elements are known (a
  /// constant, or a shape chain's result); nullopt otherwise. Computed on first request.
  const std::optional<Elems>& elems(ValueRef v);
  /// elems(v) as numbers when every element is one.
  std::optional<std::vector<std::int64_t>> ints(ValueRef v);
  /// Types the pass inferred before they are written back (the import pass writes them at
  /// once; the per-node pass reads the graph only).
  std::unordered_map<std::uint64_t, OutType> pending;

 private:
  std::optional<Elems> compute_elems(ValueRef v);
  const Graph& g_;
  std::int64_t opset_;
  int depth_ = 0;
  std::unordered_map<std::uint64_t, std::optional<Elems>> elems_;
};

/// The output types of node n from its op and inputs (onnx_sym_ops.cpp); an entry per
/// output, dtype Undefined / shape unknown where nothing is inferred.
std::vector<OutType> infer_node(Context& c, NodeId n);
/// The elements of output `v` of a shape-computing node (onnx_sym_values.cpp), nullopt
/// when they are not known.
std::optional<Elems> infer_elems(Context& c, ValueRef v);

/// The import pass: in topological order, every value the file gives no type for (untyped,
/// or typed by libonnx's inference, listed in onnx.inferred_values) gets what this pass
/// infers where libonnx left it unknown: an unknown rank, or unknown dims. Numbers libonnx
/// gave are kept. Newly typed values are added to onnx.inferred_values (export writes no
/// value_info for them). Returns the number of values whose type changed.
std::size_t infer_graph(Graph& g);

/// The per-node pass for nodes rewrites create: fills in n's outputs that are untyped or
/// were typed by libonnx's per-node inference with unknown parts (`fresh`: the ports the
/// caller just typed). Returns the ports it changed.
std::vector<std::uint32_t> infer_created(Graph& g, NodeId n, const std::vector<std::uint32_t>& fresh);

/// infer_created for a node the pass alone must type: when infer_node gives every output
/// of n an element type and a shape with every dim known (a number or a symbol), merges
/// them as infer_created(g, n, {}) would and returns the ports it changed; otherwise
/// changes nothing and returns nullopt.
std::optional<std::vector<std::uint32_t>> infer_created_completely(Graph& g, NodeId n);

}  // namespace graphfuse::onnx_io::sym
