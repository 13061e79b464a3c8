// oneDNN's f32 matmul with plain weights, by the weights' row stride: rows a multiple of 1 KiB
// apart (N = 768, 2048, 3072, ...) against the same rows padded by one cache line, which is
// what the fast MatMul kernel gives constant weights (kernels/fast/matmul.cpp).
//
//   build/bench/matmul_stride [--runs N] [MxKxN ...]
//
// Per shape, the two layouts alternate run by run (one thread, weights at a 64-byte
// boundary); prints the median milliseconds of each and GFLOP/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <dnnl.hpp>
#include <string>
#include <vector>

namespace {

using dnnl::memory;

struct Shape {
  memory::dim m, k, n;
};

struct Case {
  dnnl::matmul prim;
  memory a, b, y;
};

float* at_64_bytes(std::vector<float>& v) {
  float* p = v.data();
  while (reinterpret_cast<std::uintptr_t>(p) % 64) ++p;
  return p;
}

Case make_case(dnnl::engine& eng, const Shape& s, memory::dim ldb, std::vector<float>& a_data,
               std::vector<float>& b_data, std::vector<float>& y_data) {
  const memory::desc a_md({s.m, s.k}, memory::data_type::f32, memory::dims{s.k, 1});
  const memory::desc b_md({s.k, s.n}, memory::data_type::f32, memory::dims{ldb, 1});
  const memory::desc y_md({s.m, s.n}, memory::data_type::f32, memory::dims{s.n, 1});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, y_md), eng);
  b_data.resize(static_cast<std::size_t>(s.k * ldb) + 16);
  for (std::size_t i = 0; i < b_data.size(); ++i) b_data[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  // std::vector<float> is 16-byte aligned; each matrix starts at a 64-byte boundary.
  return {dnnl::matmul(pd), memory(a_md, eng, at_64_bytes(a_data)), memory(b_md, eng, at_64_bytes(b_data)),
          memory(y_md, eng, at_64_bytes(y_data))};
}

double run_ms(Case& c, dnnl::stream& strm) {
  const auto t0 = std::chrono::steady_clock::now();
  c.prim.execute(strm, {{DNNL_ARG_SRC, c.a}, {DNNL_ARG_WEIGHTS, c.b}, {DNNL_ARG_DST, c.y}});
  strm.wait();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    Shape s{};
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::sscanf(arg.c_str(), "%ldx%ldx%ld", &s.m, &s.k, &s.n) == 3 && s.m > 0 && s.k > 0 && s.n > 0) {
      shapes.push_back(s);
    } else {
      std::fprintf(stderr, "usage: matmul_stride [--runs N] [MxKxN ...]\n");
      return 2;
    }
  }
  if (shapes.empty()) shapes = {{197, 768, 3072}, {197, 3072, 768}, {197, 768, 2304}, {128, 768, 3072}, {50, 512, 2048}};
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::printf("| M x K x N | row stride N: ms | N + 16: ms | GFLOP/s (N / N + 16) |\n|---|---|---|---|\n");
  for (const Shape& s : shapes) {
    std::vector<float> a(static_cast<std::size_t>(s.m * s.k) + 16, 0.25f), y(static_cast<std::size_t>(s.m * s.n) + 16);
    std::vector<float> b_plain, b_padded;
    Case plain = make_case(eng, s, s.n, a, b_plain, y);
    Case padded = make_case(eng, s, s.n + 16, a, b_padded, y);
    run_ms(plain, strm);
    run_ms(padded, strm);
    std::vector<double> tp, tq;
    for (int r = 0; r < runs; ++r) {
      if (r % 2) {
        tp.push_back(run_ms(plain, strm));
        tq.push_back(run_ms(padded, strm));
      } else {
        tq.push_back(run_ms(padded, strm));
        tp.push_back(run_ms(plain, strm));
      }
    }
    const double mp = median(tp), mq = median(tq), gflop = 2.0 * s.m * s.k * s.n / 1e9;
    std::printf("| %ldx%ldx%ld | %.2f | %.2f | %.0f / %.0f |\n", s.m, s.k, s.n, mp, mq, gflop / mp * 1e3,
                gflop / mq * 1e3);
  }
  return 0;
}
