// A small ONNX model builder for the import and shape-inference tests: typed inputs,
// initializers, nodes by name, attributes.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"

namespace graphfuse::testing_onnx {

inline void set_dims(onnx::TypeProto& type, const std::vector<std::string>& dims, int elem_type) {
  auto* tt = type.mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* sh = tt->mutable_shape();
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0]))) sh->add_dim()->set_dim_value(std::stoll(d));
    else sh->add_dim()->set_dim_param(d);
  }
}

// A model of one graph: inputs, initializers and nodes added by name.
struct Model {
  onnx::ModelProto m;
  onnx::GraphProto& g;
  Model(int opset = 14) : g(*m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    g.set_name("dyn");
  }
  void input(const std::string& name, std::vector<std::string> dims, int type = onnx::TensorProto::FLOAT) {
    auto* vi = g.add_input();
    vi->set_name(name);
    set_dims(*vi->mutable_type(), dims, type);
  }
  void ints(const std::string& name, std::vector<std::int64_t> v, bool scalar = false) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  void floats(const std::string& name, std::vector<std::int64_t> dims) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::int64_t n = 1;
    for (auto d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.5f);
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        const std::string& domain = "") {
    auto& n = *g.add_node();
    n.set_op_type(op);
    n.set_domain(domain);
    n.set_name(out[0]);
    for (const auto& i : in) n.add_input(i);
    for (const auto& o : out) n.add_output(o);
    return n;
  }
  void output(const std::string& name) { g.add_output()->set_name(name); }
  void output(const std::string& name, std::vector<std::string> dims, int type = onnx::TensorProto::FLOAT) {
    auto* vi = g.add_output();
    vi->set_name(name);
    set_dims(*vi->mutable_type(), dims, type);
  }
  Graph load() { return onnx_io::graph_from_model(m, "<test>", ""); }
};

inline void attr_ints(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void attr_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

}  // namespace graphfuse::testing_onnx
