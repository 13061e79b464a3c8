// Weights by reference (docs/big-models.md): tensors loaded from .onnx files and their
// external data are views of the mapped files, kept by rewrites, written from the files,
// and pointed at by --external-data same; the wire reader that leaves raw_data in the file.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "cli_helpers.h"
#include "graphfuse/onnx.h"
#include "io/mapped_input.h"
#include "io/onnx_external.h"
#include "io/onnx_wire.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

// Distinct bytes, so a payload is found in a file by search.
std::string pattern(std::size_t n, int seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + static_cast<std::size_t>(seed) * 131 + i / 251) & 0xFF);
  return s;
}

// x [1, rows] -> MatMul w0 -> Add b0 -> y; w0 [rows, rows] float32, b0 [rows].
onnx::ModelProto model(int rows, const std::string& w_raw, const std::string& b_raw) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto& g = *m.mutable_graph();
  g.set_name("g");
  auto* x = g.add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  for (int d : {1, rows}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* w = g.add_initializer();
  w->set_name("w0");
  w->set_data_type(1);
  w->add_dims(rows);
  w->add_dims(rows);
  w->set_raw_data(w_raw);
  auto* b = g.add_initializer();
  b->set_name("b0");
  b->set_data_type(1);
  b->add_dims(rows);
  b->set_raw_data(b_raw);
  auto* mm = g.add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("w0");
  mm->add_output("mm");
  auto* add = g.add_node();
  add->set_op_type("Add");
  add->add_input("mm");
  add->add_input("b0");
  add->add_output("y");
  auto* y = g.add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  return m;
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const Tensor& value(const Graph& g, const std::string& id) {
  for (NodeId n : g.nodes())
    if (g.node(n).id == id) return *g.node(n).attrs.get_if<Tensor>("value");
  throw std::runtime_error("no node " + id);
}

class WeightsByReference : public testutil::TempDirTest {};

TEST(TensorBytes, ReadsLikeASharedString) {
  Tensor t = Tensor::from_floats({2}, {1.0f, 2.0f});
  EXPECT_TRUE(t.has_data());
  EXPECT_EQ(t.data->size(), 8u);
  EXPECT_EQ(t.as<float>()[1], 2.0f);
  Tensor u = t;
  EXPECT_EQ(u.data, t.data);  // shared, not copied
  EXPECT_EQ(*u.data, *t.data);
  t.data = std::make_shared<std::string>(std::string(8, '\0'));
  EXPECT_FALSE(u.data == t.data);
  t.data.reset();
  EXPECT_FALSE(t.has_data());
  EXPECT_TRUE(t.data == nullptr);
  EXPECT_EQ(t.mutable_bytes(), nullptr);
}

TEST(TensorBytes, MutableBytesCopiesWhatOthersSee) {
  Tensor t;
  t.data = TensorBytes::own("abcd");
  const char* before = t.data->data();
  EXPECT_EQ(t.mutable_bytes(), before);  // alone with its string: written in place
  Tensor shared = t;
  char* p = t.mutable_bytes();  // shared: copied first
  EXPECT_NE(p, before);
  p[0] = 'X';
  EXPECT_EQ(*t.data, "Xbcd");
  EXPECT_EQ(*shared.data, "abcd");
  Tensor constant;
  constant.data = std::make_shared<const std::string>("abcd");  // a const string is never written
  EXPECT_NE(constant.mutable_bytes(), shared.data->data());
}

TEST_F(WeightsByReference, BigInlineRawDataIsAViewOfTheModelFile) {
  const int rows = 64;  // w0: 16 KiB, left in the file; b0: 256 bytes, parsed
  const std::string w = pattern(rows * rows * 4, 1), b = pattern(rows * 4, 2);
  const fs::path path = dir_ / "m.onnx";
  write_bytes(path, model(rows, w, b).SerializeAsString());
  const std::string file = testutil::slurp(path);
  const std::size_t at = file.find(w);
  ASSERT_NE(at, std::string::npos);

  Graph g = load_onnx(path.string());
  const Tensor& wt = value(g, "w0");
  EXPECT_EQ(*wt.data, w);
  std::uint64_t offset = 0;
  const io::MappedInput* m = io::MappedInput::of(wt.data, &offset);
  if (at % 4 == 0) {  // aligned for float32: a view; else one aligned copy
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(offset, at);
    EXPECT_FALSE(m->data_file());
  } else {
    EXPECT_EQ(m, nullptr);
  }
  EXPECT_EQ(io::MappedInput::of(value(g, "b0").data, nullptr), nullptr);
  EXPECT_EQ(*value(g, "b0").data, b);

  // Written back from the file: the same bytes as protobuf's own serialization.
  save_onnx(g, (dir_ / "o.onnx").string());
  onnx::ModelProto back;
  ASSERT_TRUE(back.ParseFromString(testutil::slurp(dir_ / "o.onnx")));
  EXPECT_EQ(back.graph().initializer(0).raw_data(), w);
  EXPECT_EQ(back.graph().initializer(1).raw_data(), b);
  // The output over its own input: written beside it and renamed, the mapping stays valid.
  save_onnx(g, path.string());
  EXPECT_EQ(testutil::slurp(path), testutil::slurp(dir_ / "o.onnx"));
  EXPECT_EQ(*wt.data, w);
}

TEST_F(WeightsByReference, ExternalDataIsAViewAndSamePointsAtIt) {
  const int rows = 64;
  const std::string w = pattern(rows * rows * 4, 3), b = pattern(rows * 4, 4);
  onnx::ModelProto m = model(rows, "", b);
  auto* t = m.mutable_graph()->mutable_initializer(0);
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char*, std::string>{"location", "m.onnx.data"}, {"offset", "4096"},
                      {"length", std::to_string(w.size())}}) {
    auto* kv = t->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  }
  write_bytes(dir_ / "m.onnx.data", std::string(4096, '\0') + w);
  write_bytes(dir_ / "m.onnx", m.SerializeAsString());

  Graph g = load_onnx((dir_ / "m.onnx").string());
  std::uint64_t offset = 0;
  const io::MappedInput* origin = onnx_io::external_origin(value(g, "w0"), &offset);
  ASSERT_NE(origin, nullptr);
  EXPECT_EQ(offset, 4096u);
  EXPECT_EQ(*value(g, "w0").data, w);

  OnnxSaveOptions same;
  same.external_data = "same";
  save_onnx(g, (dir_ / "s.onnx").string(), same);
  EXPECT_FALSE(fs::exists(dir_ / "s.onnx.data"));  // nothing new to write
  onnx::ModelProto s;
  ASSERT_TRUE(s.ParseFromString(testutil::slurp(dir_ / "s.onnx")));
  const auto& ext = s.graph().initializer(0).external_data();
  ASSERT_EQ(ext.size(), 3);
  EXPECT_EQ(ext[0].value(), "m.onnx.data");
  EXPECT_EQ(ext[1].value(), "4096");

  // A copy-on-write makes the tensor new: `same` then writes it to a new data file.
  Graph h = g;
  for (NodeId n : h.nodes())
    if (h.node(n).id == "w0") {
      Tensor changed = *h.node(n).attrs.get_if<Tensor>("value");
      changed.mutable_bytes()[0] ^= 1;
      h.attrs(n).set("value", changed);
    }
  EXPECT_EQ(*value(g, "w0").data, w);  // the original and its file are untouched
  EXPECT_EQ(testutil::slurp(dir_ / "m.onnx.data").substr(4096), w);
  save_onnx(h, (dir_ / "c.onnx").string(), same);
  EXPECT_TRUE(fs::exists(dir_ / "c.onnx.data"));
  Graph back = load_onnx((dir_ / "c.onnx").string());
  EXPECT_EQ(*value(back, "w0").data, *value(h, "w0").data);
}

TEST(OnnxWire, LeavesBigRawDataInTheFileAndKeepsTheRest) {
  onnx::ModelProto m = model(64, pattern(64 * 64 * 4, 5), pattern(256, 6));
  m.mutable_graph()->mutable_initializer(1)->set_doc_string("small, kept");
  const std::string file = m.SerializeAsString();
  auto stripped = onnx_io::strip_initializer_data(file, 4096);
  ASSERT_TRUE(stripped);
  ASSERT_EQ(stripped->left.size(), 1u);
  EXPECT_EQ(stripped->left[0].initializer, 0u);
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(stripped->bytes));
  EXPECT_FALSE(parsed.graph().initializer(0).has_raw_data());
  parsed.mutable_graph()->mutable_initializer(0)->set_raw_data(
      file.substr(stripped->left[0].offset, stripped->left[0].length));
  EXPECT_EQ(parsed.SerializeAsString(), file);
  // Nothing to leave out, or not protobuf: protobuf parses the whole file.
  EXPECT_FALSE(onnx_io::strip_initializer_data(file, 1u << 20));
  EXPECT_FALSE(onnx_io::strip_initializer_data(file.substr(0, file.size() - 3), 4096));
  EXPECT_FALSE(onnx_io::strip_initializer_data("\xff\xff\xff", 1));
}

}  // namespace
