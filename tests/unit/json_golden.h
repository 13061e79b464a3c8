// The graph of the JSON writer's golden test (io_json_test.cpp): every kind of value the writer
// spells, n nodes. The golden bytes were written by the writer before its rewrite for speed.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "graphfuse/graph.h"

// A graph with every kind of value the JSON writer spells, over `n` nodes.
inline graphfuse::Graph golden_graph(int n) {
  using namespace graphfuse;
  Graph g;
  NodeId x = g.add_input("x", ValueType{DType::Float32, {1, 3, 224, 224}, true, {}});
  NodeId y = g.add_input("in \"quoted\"\t\x01");
  Attributes shared;
  shared.set("strides", std::vector<std::int64_t>{1, 1});
  shared.set("padding", std::string("SAME"));
  shared.set("alpha", 0.1f);
  NodeId prev = x;
  for (int i = 0; i < n; ++i) {
    std::string id = "n" + std::to_string(i) + (i % 97 == 0 ? "\xff\\/" : "");
    Attributes a;
    switch (i % 7) {
      case 0: a = shared; break;
      case 1: a.set("f", static_cast<float>(i) / 7.0f); a.set("nan", std::numeric_limits<float>::quiet_NaN());
              a.set("inf", -std::numeric_limits<float>::infinity()); break;
      case 2: a.set("fs", std::vector<float>{1e-45f, 3.4028235e38f, -0.0f, 0.3f, 1e10f});
              a.set("b", i % 2 == 0); a.set("bs", std::vector<bool>{true, false}); break;
      case 3: {
        Tensor t;
        t.dtype = i % 2 ? DType::Float32 : DType::Int64;
        t.shape = {2};
        std::string bytes;
        if (t.dtype == DType::Float32) { float v[2] = {1.5f, -2.25e-7f}; bytes.assign(reinterpret_cast<char*>(v), 8); }
        else { std::int64_t v[2] = {-9000000000000000000LL, 42}; bytes.assign(reinterpret_cast<char*>(v), 16); }
        t.data = std::make_shared<const std::string>(bytes);
        a.set("value", t);
        Tensor s; s.dtype = DType::Float16; s.shape = {0, 3}; a.set("shape_only", s);
        a.set("ts", std::vector<Tensor>{s});
        break;
      }
      case 4: a.set("o", Opaque{"kind", std::string("\x00\x01\xfe", 3)}); a.set("ss", std::vector<std::string>{"a", "b\n", ""}); break;
      case 5: a.set("i", static_cast<std::int64_t>(i) * -123456789); a.set("empty", std::vector<std::int64_t>{}); break;
      default: break;
    }
    std::uint32_t outs = i % 11 == 0 ? 3 : 1;
    std::vector<ValueRef> ins{{prev, 0}};
    if (i % 5 == 0) ins.push_back({y, 0});
    if (i % 13 == 0) ins.push_back({});
    NodeId m = g.add_node(id, OpType::intern(i % 3 ? "Conv2D" : "com.x.Fused"), ins, a, outs);
    if (outs == 3) {
      g.output_infos(m)[1].name = id + "_second";
      g.output_infos(m)[2].name = id + ":2";
      g.output_infos(m)[2].type = ValueType{DType::Int8, {-1, 4}, true, {"N", ""}};
    }
    if (i % 17 == 0) g.output_infos(m)[0].type = ValueType{DType::BFloat16, {}, false, {}};
    if (i % 19 == 0) g.output_infos(m)[0].type = ValueType{DType::Undefined, {5}, true, {}};
    prev = m;
    if (i % 1000 == 999) g.add_output({m, 0});
  }
  g.add_output({prev, 0});
  g.properties().set("p", std::string("v"));
  g.properties().set("q", std::vector<float>{1.0f, 2.5f});
  return g;
}

/// FNV-1a, 64 bits: a golden output's fingerprint.
inline std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
