// Seeded CNN-like graph generator (examples, tests, benchmarks).
#include "graphfuse/generate.h"

#include <algorithm>
#include <array>
#include <random>
#include <string>

#include "graph/graph_tuning.h"

namespace graphfuse {

namespace {

/// The network's shape, ResNet-style: the input is NHWC [1, 16, 16, 8]; every block keeps
/// the spatial size and channel count of the value it reads, except one downsample block
/// at each quarter of the node budget, which halves the spatial size and doubles the
/// channels (16x16x8 -> 8x8x16 -> 4x4x32 -> 2x2x64). A 3x3 convolution costs the same in
/// every stage (about 150k multiply-adds), so a few hundred nodes run on the reference
/// kernels in milliseconds.
constexpr std::int64_t kSide = 16, kChannels = 8;
constexpr int kStages = 4;

Attributes shape(std::vector<std::int64_t> dims) {
  Attributes a;
  a.set("shape", std::move(dims));
  return a;
}

/// Constant shapes of one stage (C channels), made once and copied: copies share their
/// entries, which keeps a 10^7-node graph quick to build and small in memory.
struct StageShapes {
  Attributes conv3, conv1, bias, matrix;  ///< [3,3,C,C] [1,1,C,C] [C] [C,C]
  Attributes down3, down1;                ///< [3,3,C,2C] [1,1,C,2C]: into the next stage
  explicit StageShapes(std::int64_t c)
      : conv3(shape({3, 3, c, c})), conv1(shape({1, 1, c, c})), bias(shape({c})), matrix(shape({c, c})),
        down3(shape({3, 3, c, 2 * c})), down1(shape({1, 1, c, 2 * c})) {}
};

/// Builds blocks on a running "current value", naming nodes n<counter> so ids are
/// short, unique and deterministic.
class Builder {
 public:
  Builder(Graph& g, std::uint64_t seed) : g_(g), rng_(seed) {
    for (int s = 0; s < kStages; ++s) stages_.emplace_back(kChannels << s);
    for (std::int64_t s : {1, 2})
      for (const char* pad : {"SAME", "VALID"}) {
        Attributes a;
        a.set("strides", std::vector<std::int64_t>{s, s});
        a.set("padding", std::string(pad));
        conv_attrs_.push_back(std::move(a));
      }
  }

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  int stage() const { return stage_; }

  ValueRef add(OpType op, std::vector<ValueRef> inputs, const Attributes& attrs = {}) {
    // append() rather than "n" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string id = "n";
    id.append(std::to_string(counter_++));
    NodeId n = g_.add_node(std::move(id), op, std::move(inputs), attrs);
    return {n, 0};
  }
  ValueRef constant(const Attributes& shape) { return add(const_, {}, shape); }

  /// A convolution that keeps the shape: 3x3 SAME, or one time in three 1x1 VALID.
  ValueRef conv(ValueRef x) {
    const StageShapes& s = stages_[static_cast<std::size_t>(stage_)];
    if (pick(3) == 0) return add(conv_, {x, constant(s.conv1)}, conv_attrs_[kS1Valid]);
    return add(conv_, {x, constant(s.conv3)}, conv_attrs_[kS1Same]);
  }
  ValueRef bias(ValueRef x) { return add(bias_add_, {x, constant(cur().bias)}); }
  ValueRef relu(ValueRef x) { return add(relu_, {x}); }
  ValueRef sum(ValueRef a, ValueRef b) { return add(add_, {a, b}); }
  /// MatMul over the channels ([1,H,W,C] x [C,C]), then a vector Add.
  ValueRef matmul_add(ValueRef x) {
    ValueRef m = add(matmul_, {x, constant(cur().matrix)});
    return sum(m, constant(cur().bias));
  }
  /// GraphShape::Wide's block: x feeds 8-16 branches of 1-3 Conv2D -> BiasAdd -> ReLU
  /// chains, all convolutions sharing one weight constant and all BiasAdds one bias
  /// constant; the branches are summed pairwise (a balanced tree of Adds).
  ValueRef wide(ValueRef x) {
    const StageShapes& s = cur();
    ValueRef w = constant(s.conv3), b = constant(s.bias);
    std::vector<ValueRef> branches(static_cast<std::size_t>(8 + pick(9)));
    for (ValueRef& v : branches) {
      v = x;
      for (int k = 0, chain = 1 + pick(3); k < chain; ++k)
        v = relu(add(bias_add_, {add(conv_, {v, w}, conv_attrs_[kS1Same]), b}));
    }
    while (branches.size() > 1) {
      std::vector<ValueRef> next;
      for (std::size_t i = 0; i + 1 < branches.size(); i += 2) next.push_back(sum(branches[i], branches[i + 1]));
      if (branches.size() % 2) next.push_back(branches.back());
      branches.swap(next);
    }
    return branches.front();
  }
  /// ReLU(Add(shortcut, BiasAdd(Conv2D(x)))) into the next stage: a 3x3 stride-2 SAME
  /// branch and a 1x1 stride-2 VALID shortcut, both ceil(H/2) wide with 2C channels.
  ValueRef downsample(ValueRef x) {
    const StageShapes& s = cur();
    ValueRef branch = add(conv_, {x, constant(s.down3)}, conv_attrs_[kS2Same]);
    ValueRef shortcut = add(conv_, {x, constant(s.down1)}, conv_attrs_[kS2Valid]);
    ++stage_;  // the bias after the strided conv has the next stage's width
    return relu(sum(shortcut, bias(branch)));
  }

 private:
  static constexpr std::size_t kS1Same = 0, kS1Valid = 1, kS2Same = 2, kS2Valid = 3;
  const StageShapes& cur() const { return stages_[static_cast<std::size_t>(stage_)]; }

  Graph& g_;
  std::mt19937_64 rng_;
  const OpType const_ = OpType::intern("Const"), conv_ = OpType::intern("Conv2D"),
               bias_add_ = OpType::intern("BiasAdd"), relu_ = OpType::intern("ReLU"),
               add_ = OpType::intern("Add"), matmul_ = OpType::intern("MatMul");
  std::vector<StageShapes> stages_;
  std::vector<Attributes> conv_attrs_;  // strides {1, 2} x padding {SAME, VALID}
  int stage_ = 0;
  std::size_t counter_ = 0;
};

}  // namespace

Graph generate_cnn_graph(const GenerateOptions& opt) {
  Graph g;
  g.reserve(opt.nodes + 8);
  GraphTuning::begin_bulk(g);  // ids are unique by construction; file them in one pass at the end
  Builder b(g, opt.seed);
  ValueType input_type{DType::Float32, {1, kSide, kSide, kChannels}, true, {}};
  ValueRef cur{g.add_input("input", std::move(input_type)), 0};
  while (opt.shape == GraphShape::Wide && g.size() + 8 < opt.nodes) cur = b.wide(cur);
  while (opt.shape == GraphShape::Cnn && g.size() + 8 < opt.nodes) {
    // Each quarter of the budget is one stage: the first block past a boundary downsamples.
    if (b.stage() + 1 < kStages &&
        g.size() * kStages >= opt.nodes * static_cast<std::size_t>(b.stage() + 1)) {
      cur = b.downsample(cur);
      continue;
    }
    int kind = b.pick(opt.matmul_chains ? 10 : 9);
    if (kind <= 4) {  // fusible: Conv2D -> BiasAdd -> ReLU
      cur = b.relu(b.bias(b.conv(cur)));
    } else if (kind == 5) {  // residual: ReLU(Add(x, BiasAdd(Conv2D(x))))
      ValueRef branch = b.bias(b.conv(cur));
      cur = b.relu(b.sum(cur, branch));
    } else if (kind == 6) {  // Conv2D output with two consumers: must not fuse
      ValueRef c = b.conv(cur);
      cur = b.sum(b.relu(b.bias(c)), c);
    } else if (kind <= 8) {  // BiasAdd without ReLU
      cur = b.bias(b.conv(cur));
    } else {  // MatMul -> Add
      cur = b.matmul_add(cur);
    }
  }
  g.add_output(cur);
  GraphTuning::end_bulk(g);
  return g;
}

std::optional<FanoutForm> fanout_form(std::string_view name) {
  if (name == "chains") return FanoutForm::Chains;
  if (name == "weights") return FanoutForm::Weights;
  if (name == "shapes") return FanoutForm::Shapes;
  return std::nullopt;
}

Graph generate_fanout_graph(const FanoutOptions& opt) {
  // Per chain: `link` nodes a link, then one Xor joining it to the others.
  const std::size_t link = opt.form == FanoutForm::Chains ? 4 : 3;
  const std::size_t chains = std::max<std::size_t>(1, std::min(opt.chains, opt.nodes / (link + 1)));
  const std::size_t links = std::max<std::size_t>(1, opt.nodes / chains / link);
  Graph g;
  g.reserve(chains * (links * link + 1) + 8);
  GraphTuning::begin_bulk(g);  // ids are unique by construction
  std::size_t counter = 0;
  auto add = [&](OpType op, std::vector<ValueRef> inputs, Attributes attrs = {}) {
    std::string id = "n";
    id.append(std::to_string(counter++));
    return ValueRef{g.add_node(std::move(id), op, std::move(inputs), std::move(attrs)), 0};
  };
  auto constant = [&](const char* id, Tensor t) {
    Attributes a;
    a.set("value", std::move(t));
    return ValueRef{g.add_node(id, OpType::intern(ops::kConst), {}, std::move(a)), 0};
  };
  const bool ints = opt.form != FanoutForm::Weights;
  const std::vector<std::int64_t> row = opt.form == FanoutForm::Weights ? std::vector<std::int64_t>{1, 8}
                                        : opt.form == FanoutForm::Shapes ? std::vector<std::int64_t>{2, 4}
                                                                         : std::vector<std::int64_t>{};
  ValueRef x{g.add_input("x", ValueType{ints ? DType::Int64 : DType::Float32, row, true, {}}), 0};
  ValueRef k{g.add_input("k", ValueType{ints ? DType::Int64 : DType::Float32, row, true, {}}), 0};
  ValueRef c1, c2;
  OpType a_op, b_op, c_op, d_op;
  switch (opt.form) {
    case FanoutForm::Chains:
      c1 = constant("one", Tensor::from_ints({}, {1}));
      c2 = constant("zero", Tensor::from_ints({}, {0}));
      a_op = OpType::intern("Mul"), b_op = OpType::intern("Add"), d_op = OpType::intern("Xor");
      break;
    case FanoutForm::Weights:
      c1 = constant("w", Tensor::from_floats({8, 8}, std::vector<float>(64, 0.125f)));
      c2 = constant("b", Tensor::from_floats({8}, std::vector<float>(8, 0.5f)));
      a_op = OpType::intern("MatMul"), b_op = OpType::intern("Add"), c_op = OpType::intern("Relu");
      d_op = OpType::intern("Add");
      break;
    case FanoutForm::Shapes:
      c1 = constant("s1", Tensor::from_ints({2}, {4, 2}));
      c2 = constant("s2", Tensor::from_ints({2}, {2, 4}));
      a_op = OpType::intern("Reshape"), b_op = a_op, c_op = OpType::intern("Tanh");
      d_op = OpType::intern("Add");
      break;
  }
  ValueRef joined;
  for (std::size_t c = 0; c < chains; ++c) {
    ValueRef prev = x;
    for (std::size_t l = 0; l < links; ++l) {
      ValueRef v = add(a_op, {prev, c1});
      v = add(b_op, {v, c2});
      if (opt.form == FanoutForm::Chains) prev = add(d_op, {add(b_op, {v, x}), k});
      else prev = add(c_op, {v});
    }
    joined = c == 0 ? prev : add(d_op, {joined, prev});
  }
  g.add_output(joined);
  GraphTuning::end_bulk(g);
  return g;
}

}  // namespace graphfuse
