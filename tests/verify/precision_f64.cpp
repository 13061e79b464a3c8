// The accuracy question of `graphfuse verify` (issue 6): which of two float32 graphs that
// compute the same function (an original and its rewrite) is closer to the exact result?
//
//   precision_f64 prepare ORIGINAL.onnx REWRITTEN.onnx DIR [--seed S]
//     runs both graphs on the reference kernels with `graphfuse verify`'s seeded inputs and
//     writes DIR/input<k>.f64 (the inputs as float64), DIR/original<k>.f32 and
//     DIR/rewritten<k>.f32 (their outputs), and DIR/original_f64.onnx: the original graph
//     with every float32 tensor, type and Cast turned into float64, for ONNX Runtime to
//     evaluate in double precision (tests/verify/precision_f64.sh does all of it).
//   precision_f64 compare DIR EXACT<k>.f64...
//     compares both float32 results with the float64 ones, output by output (and, as
//     `graphfuse verify` does, the rewrite with the original): max |a - x|, max |a - x| /
//     max |x| (norm-wise), max |a - x| / |x| (element-wise) and the |x| of that element, the
//     RMS error over max |x|, and how many elements are off by more than 1e-4 of themselves.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "graphfuse/io.h"
#include "graphfuse/kernels/executor.h"

using namespace graphfuse;
namespace gk = graphfuse::kernels;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(SourceLoc{path}, "cannot open");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(SourceLoc{path}, "cannot write");
}

std::string f32_to_f64(std::string_view bytes) {
  std::string out(bytes.size() * 2, '\0');
  for (std::size_t i = 0; i < bytes.size() / 4; ++i) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    double d = f;
    std::memcpy(out.data() + 8 * i, &d, 8);
  }
  return out;
}

Tensor to_f64(const Tensor& t) {
  if (t.dtype != DType::Float32 || !t.has_data()) return t;
  Tensor d = t;
  d.dtype = DType::Float64;
  d.data = std::make_shared<const std::string>(f32_to_f64(*t.data));
  return d;
}

// The same graph in float64: constants (Const values, Constant node tensors), value types
// and Cast targets. Ops ONNX Runtime runs in double on CPU are all the transformer needs.
Graph widen(Graph g) {
  for (NodeId n : g.nodes()) {
    Attributes& a = g.attrs(n);
    if (const Tensor* t = a.get_if<Tensor>("value")) a.set("value", to_f64(*t));
    if (const float* f = a.get_if<float>("value_float")) {
      a.set("value", to_f64(Tensor::from_floats({}, {*f})));
      a.erase("value_float");
    }
    if (std::string(g.node(n).op.name()) == "Cast")
      if (const auto* to = a.get_if<std::int64_t>("to"); to && *to == 1) a.set("to", std::int64_t{11});
    for (auto& info : g.output_infos(n))
      if (info.type.dtype == DType::Float32) info.type.dtype = DType::Float64;
  }
  g.properties().erase("onnx.inferred_values");
  return g;
}

int prepare(int argc, char** argv) {
  if (argc < 5) throw Error("prepare ORIGINAL.onnx REWRITTEN.onnx DIR [--seed S]");
  const std::string dir = argv[4];
  std::uint64_t seed = argc >= 7 && std::string(argv[5]) == "--seed" ? std::stoull(argv[6]) : 0;
  Graph original = load_graph(argv[2]), rewritten = load_graph(argv[3]);
  gk::ExecOptions exec;
  exec.set = gk::KernelSet::Reference;
  exec.seed = seed;
  const auto inputs = gk::make_random_inputs(original, seed, exec);
  const auto a = gk::run_graph(original, inputs, exec);
  const auto b = gk::run_graph(rewritten, inputs, exec);
  // inputs.txt: one `name=file:d0xd1x...` per input, what run_model.js --input takes.
  std::ofstream list(dir + "/inputs.txt");
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].dtype != DType::Float32) throw Error("input " + std::to_string(k) + " is not float32");
    const std::string file = dir + "/input" + std::to_string(k) + ".f64";
    write_bytes(file, f32_to_f64(*inputs[k].data));
    std::string dims;
    for (std::int64_t d : inputs[k].shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    list << original.value_name({original.inputs()[k], 0}) << "=" << file << ":" << dims << "\n";
  }
  for (std::size_t k = 0; k < a.size(); ++k) {
    write_bytes(dir + "/original" + std::to_string(k) + ".f32", *a[k].data);
    write_bytes(dir + "/rewritten" + std::to_string(k) + ".f32", *b[k].data);
  }
  save_graph(widen(std::move(original)), dir + "/original_f64.onnx");
  std::printf("%zu input(s), %zu output(s) written to %s\n", inputs.size(), a.size(), dir.c_str());
  return 0;
}

struct Errors {
  double max_abs = 0, max_rel = 0, at = 0, rms = 0;  ///< at: |x| where max_rel is
  std::size_t over = 0;
};

template <class X>
Errors errors(const std::vector<float>& a, const std::vector<X>& x, double scale) {
  Errors e;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - static_cast<double>(x[i]));
    const double ax = std::fabs(static_cast<double>(x[i]));
    e.max_abs = std::max(e.max_abs, d);
    if (ax != 0 && d / ax > e.max_rel) {
      e.max_rel = d / ax;
      e.at = ax;
    }
    e.over += d > 1e-4 * ax;
    e.rms += d * d;
  }
  e.rms = std::sqrt(e.rms / static_cast<double>(a.size())) / scale;
  return e;
}

int compare(int argc, char** argv) {
  if (argc < 4) throw Error("compare DIR EXACT0.f64 [EXACT1.f64 ...]");
  const std::string dir = argv[2];
  std::printf("%-6s %-22s %10s %11s %10s %12s %11s %16s\n", "output", "float32 graph vs", "max_abs", "abs/max|x|",
              "max_rel", "|x| there", "rms/max|x|", "elems rel>1e-4");
  for (int k = 0; k + 3 < argc; ++k) {
    const std::string x_bytes = read_bytes(argv[3 + k]);
    std::vector<double> x(x_bytes.size() / 8);
    std::memcpy(x.data(), x_bytes.data(), x.size() * 8);
    double scale = 0;
    for (double v : x) scale = std::max(scale, std::fabs(v));
    std::vector<float> f32[2];
    const char* names[2] = {"original", "rewritten"};
    for (int w = 0; w < 2; ++w) {
      const std::string bytes = read_bytes(dir + "/" + names[w] + std::to_string(k) + ".f32");
      f32[w].resize(bytes.size() / 4);
      std::memcpy(f32[w].data(), bytes.data(), f32[w].size() * 4);
      if (f32[w].size() != x.size()) throw Error(std::string(names[w]) + ": element count differs from the float64 result");
    }
    auto row = [&](const char* label, const Errors& e, std::size_t n) {
      std::printf("%-6d %-22s %10.3g %11.3g %10.3g %12.3g %11.3g %7zu of %zu\n", k, label, e.max_abs, e.max_abs / scale,
                  e.max_rel, e.at, e.rms, e.over, n);
    };
    row("original, float64", errors(f32[0], x, scale), x.size());
    row("rewritten, float64", errors(f32[1], x, scale), x.size());
    // What `graphfuse verify` reports: the rewrite against the original, both float32.
    row("rewritten, original", errors(f32[1], f32[0], scale), x.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "prepare") return prepare(argc, argv);
    if (mode == "compare") return compare(argc, argv);
    std::cerr << "usage: precision_f64 prepare ORIGINAL.onnx REWRITTEN.onnx DIR [--seed S]\n"
                 "       precision_f64 compare DIR EXACT0.f64 [EXACT1.f64 ...]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "precision_f64: " << e.what() << "\n";
    return 1;
  }
}
