// Seeded CNN-like graph generator (examples, tests, benchmarks).
#include "graphfuse/generate.h"

#include <random>
#include <string>

namespace graphfuse {

namespace {

/// Builds blocks on a running "current value", naming nodes n<counter> so ids are
/// short, unique and deterministic.
class Builder {
 public:
  Builder(Graph& g, std::uint64_t seed)
      : g_(g), rng_(seed), const_(OpType::intern("Const")), conv_(OpType::intern("Conv2D")) {}

  ValueRef add(std::string_view op, std::vector<ValueRef> inputs, Attributes attrs = {}) {
    return add(OpType::intern(op), std::move(inputs), std::move(attrs));
  }
  ValueRef add(OpType op, std::vector<ValueRef> inputs, Attributes attrs = {}) {
    // append() rather than "n" + to_string(): GCC 12 warns falsely (-Wrestrict) on the latter.
    std::string id = "n";
    id.append(std::to_string(counter_++));
    NodeId n = g_.add_node(std::move(id), op, std::move(inputs), std::move(attrs));
    return {n, 0};
  }
  ValueRef constant(std::vector<std::int64_t> shape) {
    Attributes a;
    a.set("shape", std::move(shape));
    return add(const_, {}, std::move(a));
  }
  ValueRef conv(ValueRef x) {
    Attributes a;
    std::int64_t s = pick(4) == 0 ? 2 : 1;
    a.set("strides", std::vector<std::int64_t>{s, s});
    a.set("padding", std::string(pick(3) == 0 ? "VALID" : "SAME"));
    return add(conv_, {x, constant({3, 3, 64, 64})}, std::move(a));
  }
  ValueRef bias(ValueRef x) { return add("BiasAdd", {x, constant({64})}); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

 private:
  Graph& g_;
  std::mt19937_64 rng_;
  OpType const_, conv_;
  std::size_t counter_ = 0;
};

}  // namespace

Graph generate_cnn_graph(const GenerateOptions& opt) {
  Graph g;
  Builder b(g, opt.seed);
  ValueRef cur{g.add_input("input"), 0};
  while (g.size() + 8 < opt.nodes) {
    int kind = b.pick(opt.matmul_chains ? 10 : 9);
    if (kind <= 4) {  // fusible: Conv2D -> BiasAdd -> ReLU
      cur = b.add("ReLU", {b.bias(b.conv(cur))});
    } else if (kind == 5) {  // residual: ReLU(Add(x, BiasAdd(Conv2D(x))))
      ValueRef branch = b.bias(b.conv(cur));
      cur = b.add("ReLU", {b.add("Add", {cur, branch})});
    } else if (kind == 6) {  // Conv2D output with two consumers: must not fuse
      ValueRef c = b.conv(cur);
      cur = b.add("Add", {b.add("ReLU", {b.bias(c)}), c});
    } else if (kind <= 8) {  // BiasAdd without ReLU
      cur = b.bias(b.conv(cur));
    } else {  // MatMul -> Add
      ValueRef m = b.add("MatMul", {cur, b.constant({64, 64})});
      cur = b.add("Add", {m, b.constant({64})});
    }
  }
  g.add_output(cur);
  return g;
}

}  // namespace graphfuse
