// Target profiles: what a target implements (ops with conditions) and the machine
// figures a cost model needs, loaded from targets/NAME.yaml (docs/cost-model.md).
#pragma once

#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/error.h"
#include "graphfuse/graph.h"

namespace graphfuse {

/// A value's type as the target filter and the cost model read it, without copying the
/// shape (the gate looks at several values of every candidate of a round).
struct TypeView {
  DType dtype = DType::Undefined;
  std::span<const std::int64_t> shape;
  bool shape_known = false;
  bool present = true;  ///< false: an absent optional input

  TypeView() = default;
  TypeView(const ValueType& t) : dtype(t.dtype), shape(t.shape), shape_known(t.shape_known) {}  // NOLINT: a view of t
  static TypeView absent() {
    TypeView v;
    v.present = false;
    return v;
  }
};

/// A condition on one attribute of an op the target implements.
struct AttrCondition {
  std::string name;
  /// Accepted values in canonical text (attr_text); empty = any value.
  std::vector<std::string> values;
  bool required = false;   ///< the attribute must be present
  std::string fallback;    ///< the value an absent attribute stands for ("" = none)
  SourceLoc loc;
};

/// A condition on dimensions of one input of an op the target implements: each listed dim
/// (negative: counted from the end) must be one of `values`, a multiple of `multiple_of`,
/// and within [min, max], as far as these are given. An input whose shape or a dim is not
/// known passes; a known rank without the dim fails.
struct ShapeCondition {
  int input = 0;
  std::vector<int> dims;
  std::vector<std::int64_t> values;  ///< empty = any
  std::int64_t multiple_of = 0;      ///< 0 = any
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  SourceLoc loc;
};

/// One op of a target and the conditions under which the target has a kernel for it.
struct OpSupport {
  std::string op;
  bool available = true;           ///< false: listed as missing (with a note)
  /// false: the target has a kernel, but it was measured slower than the ops a rewrite
  /// would replace; target-gated rewrites never emit it (the note says what was measured).
  bool pays = true;
  /// With pays false: the unfused form it was measured against (op names). A rewrite that
  /// removes only nodes of these ops is declined; one that removes others as well (a
  /// decomposed form the measurement did not cover) is left to the cost model. Empty: every
  /// rewrite into the op is declined.
  std::vector<std::string> slower_than;
  /// With pays false: the size up to which it was measured faster after all (kernel
  /// overhead dominating the unfused form): the op pays where input `pays_up_to_input`'s
  /// element count is known and at most `pays_up_to`. 0 = at no size.
  std::int64_t pays_up_to = 0;
  int pays_up_to_input = 0;
  std::vector<DType> dtypes;       ///< accepted dtypes of input 0; empty = any
  std::vector<int> ranks;          ///< accepted ranks of input 0; empty = any
  int max_inputs = -1;             ///< -1 = any number
  std::vector<AttrCondition> attrs;
  std::vector<ShapeCondition> shapes;
  /// How many leading inputs the conditions read the types of (0: none; dtype and rank
  /// read input 0, a shape condition its input).
  std::size_t typed_inputs() const;
  /// Whether emitting the op pays for these input types: `pays`, or the known size of the
  /// `pays_up_to` input within it.
  bool pays_at(std::span<const TypeView> inputs) const;
  std::string note;
  SourceLoc loc;
};

/// Efficiency of a kernel class at a size: the fraction of peak reached (compute for
/// conv/matmul, bandwidth for the others). Points sorted by size; interpolated in log(size).
struct EfficiencyPoint {
  double size = 0;      ///< FLOPs (conv, matmul) or bytes moved (eltwise, other)
  double fraction = 1;  ///< 0 < fraction <= 1 (a bit over 1 allowed: caches beat DRAM)
};

/// The figures of the roofline model.
struct MachineFigures {
  std::map<DType, double> peak_gflops;  ///< per dtype; float32 is the fallback
  double bandwidth_gbs = 10;
  double kernel_overhead_us = 5;  ///< fixed cost per executed node
  double cache_mb = 8;
  int threads = 1;
  std::map<std::string, std::vector<EfficiencyPoint>> efficiency;  ///< "conv", "matmul", "eltwise"
};

/// A loaded target profile.
struct TargetProfile {
  std::string name;
  std::string doc;
  std::string file;  ///< where it was read from
  /// Globs (`*`, `?`) over op names without a domain that are available without being
  /// listed; an op with a domain ("com.microsoft.X") is available only when listed.
  std::vector<std::string> standard_ops;
  std::vector<OpSupport> ops;
  MachineFigures machine;
  /// The ONNX opset a graph importing an older one is raised to before rewriting, where no
  /// node changes meaning (graphfuse/onnx.h raise_onnx_opset): the target runs it, and rules
  /// emit ops that exist only from it on (LayerNormalization at 17). 0: opsets stay.
  std::int64_t raise_onnx_opset = 0;
  /// The smallest estimated saving (microseconds) for which a rewrite is applied.
  double min_saving_us = 0.5;
  /// ... and as a fraction of the replaced nodes' estimated time.
  double min_saving_fraction = 0;

  /// The listed entry for `op`, or null.
  const OpSupport* find(std::string_view op) const;
  /// Whether `op` is implemented at all (listed and available, or standard).
  bool has_op(std::string_view op) const;
  /// Why the target has no kernel for a node of `op` with `attrs` whose inputs have
  /// types `inputs` (a null entry is unknown): "" when it has one, else the reason in
  /// the form "no_kernel: OP with activation Clip on TARGET". Unknown facts pass.
  std::string lacks(std::string_view op, const Attributes& attrs, const std::vector<const ValueType*>& inputs) const;
  /// The same for an op listed as `s` (find(op)), its inputs as views (an absent one has
  /// `present` false): the conditions only, no lookup of the op.
  std::string lacks(const OpSupport& s, const Attributes& attrs, std::span<const TypeView> inputs) const;
};

/// Canonical text of an attribute value for conditions: a string as is, numbers in
/// shortest form, lists as "[a, b]".
std::string attr_text(const AttrValue& v);

/// Loads a profile: `name_or_file` is a path (contains '/' or ends in .yaml/.yml) or a
/// name looked up as NAME.yaml in target_dirs(). Errors carry file:line:column.
TargetProfile load_target(const std::string& name_or_file);
/// The same from memory; `file` names the text in errors.
TargetProfile load_target_from_string(std::string_view yaml, const std::string& file = "<target>");
/// Whether a YAML text is a target profile rather than a rule file: it has a top-level
/// `target:` key (no rule file has one), malformed or not.
bool is_target_profile_text(std::string_view yaml);
/// Folders searched for named targets: $GRAPHFUSE_TARGETS (':'-separated), then the
/// source tree's targets/ and the installed share/graphfuse/targets.
std::vector<std::string> target_dirs();
/// The profile as YAML text that load_target_from_string reads back (calibrate writes it).
std::string target_yaml(const TargetProfile& t);

}  // namespace graphfuse
