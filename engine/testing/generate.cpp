// Seeded CNN-like graph generator (examples, tests, benchmarks).
#include "graphfuse/generate.h"

#include <random>
#include <string>

namespace graphfuse {

namespace {

/// Builds blocks on a running "current value", naming nodes n<counter> so ids are
/// short, unique and deterministic. Op types and attribute sets are made once and
/// copied (copies share their entries), which keeps a 10^7-node graph quick to build.
class Builder {
 public:
  Builder(Graph& g, std::uint64_t seed) : g_(g), rng_(seed) {
    for (std::int64_t s : {1, 2})
      for (const char* pad : {"SAME", "VALID"}) {
        Attributes a;
        a.set("strides", std::vector<std::int64_t>{s, s});
        a.set("padding", std::string(pad));
        conv_attrs_.push_back(std::move(a));
      }
  }

  ValueRef add(OpType op, std::vector<ValueRef> inputs, Attributes attrs = {}) {
    // append() rather than "n" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string id = "n";
    id.append(std::to_string(counter_++));
    NodeId n = g_.add_node(std::move(id), op, std::move(inputs), std::move(attrs));
    return {n, 0};
  }
  ValueRef constant(const Attributes& shape) { return add(const_, {}, shape); }
  ValueRef conv(ValueRef x) {
    int stride = pick(4) == 0 ? 1 : 0;  // index into conv_attrs_: strides 2 one time in four
    int valid = pick(3) == 0 ? 1 : 0;
    return add(conv_, {x, constant(weights_)}, conv_attrs_[static_cast<std::size_t>(stride * 2 + valid)]);
  }
  ValueRef bias(ValueRef x) { return add(bias_add_, {x, constant(bias_shape_)}); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  const OpType relu_ = OpType::intern("ReLU"), add_ = OpType::intern("Add"),
               matmul_ = OpType::intern("MatMul");
  const Attributes matrix_ = shape({64, 64}), bias_shape_ = shape({64});

 private:
  static Attributes shape(std::vector<std::int64_t> dims) {
    Attributes a;
    a.set("shape", std::move(dims));
    return a;
  }
  Graph& g_;
  std::mt19937_64 rng_;
  const OpType const_ = OpType::intern("Const"), conv_ = OpType::intern("Conv2D"),
               bias_add_ = OpType::intern("BiasAdd");
  const Attributes weights_ = shape({3, 3, 64, 64});
  std::vector<Attributes> conv_attrs_;  // strides {1, 2} x padding {SAME, VALID}
  std::size_t counter_ = 0;
};

}  // namespace

Graph generate_cnn_graph(const GenerateOptions& opt) {
  Graph g;
  g.reserve(opt.nodes + 8);
  g.begin_bulk();  // ids are unique by construction; file them in one pass at the end
  Builder b(g, opt.seed);
  ValueRef cur{g.add_input("input"), 0};
  while (g.size() + 8 < opt.nodes) {
    int kind = b.pick(opt.matmul_chains ? 10 : 9);
    if (kind <= 4) {  // fusible: Conv2D -> BiasAdd -> ReLU
      cur = b.add(b.relu_, {b.bias(b.conv(cur))});
    } else if (kind == 5) {  // residual: ReLU(Add(x, BiasAdd(Conv2D(x))))
      ValueRef branch = b.bias(b.conv(cur));
      cur = b.add(b.relu_, {b.add(b.add_, {cur, branch})});
    } else if (kind == 6) {  // Conv2D output with two consumers: must not fuse
      ValueRef c = b.conv(cur);
      cur = b.add(b.add_, {b.add(b.relu_, {b.bias(c)}), c});
    } else if (kind <= 8) {  // BiasAdd without ReLU
      cur = b.bias(b.conv(cur));
    } else {  // MatMul -> Add
      ValueRef m = b.add(b.matmul_, {cur, b.constant(b.matrix_)});
      cur = b.add(b.add_, {m, b.constant(b.bias_shape_)});
    }
  }
  g.add_output(cur);
  g.end_bulk();
  return g;
}

}  // namespace graphfuse
