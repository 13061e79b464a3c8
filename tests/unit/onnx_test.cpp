// ONNX import/export: round trips of a hand-built model and of every model in ../shared/models.
#include "test_paths.h"
#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "io/onnx_convert.h"

using namespace graphfuse;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("graphfuse_onnx_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string ref_str(const Graph& g, ValueRef v) {
  return v.valid() ? g.node(v.node).id + ":" + std::to_string(v.port) : "<absent>";
}

// Same nodes (ids, ops, inputs, attributes incl. tensor bytes, outputs), same graph inputs,
// outputs and properties. Node numbering may differ; ids are what must match.
void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  for (NodeId n : a.nodes()) {
    const Node& na = a.node(n);
    auto m = b.find(na.id);
    ASSERT_TRUE(m.has_value()) << "node '" << na.id << "' is missing after the round trip";
    const Node& nb = b.node(*m);
    EXPECT_EQ(na.op, nb.op) << na.id;
    EXPECT_TRUE(na.attrs == nb.attrs) << "attributes of " << na.id;
    ASSERT_EQ(na.inputs.size(), nb.inputs.size()) << na.id;
    for (std::size_t i = 0; i < na.inputs.size(); ++i)
      EXPECT_EQ(ref_str(a, na.inputs[i]), ref_str(b, nb.inputs[i])) << na.id << " input " << i;
    EXPECT_TRUE(na.outputs == nb.outputs) << "output infos of " << na.id;
  }
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (std::size_t i = 0; i < a.inputs().size(); ++i)
    EXPECT_EQ(a.node(a.inputs()[i]).id, b.node(b.inputs()[i]).id);
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (std::size_t i = 0; i < a.outputs().size(); ++i)
    EXPECT_EQ(ref_str(a, a.outputs()[i]), ref_str(b, b.outputs()[i]));
  EXPECT_TRUE(a.properties() == b.properties()) << "graph properties differ";
}

void set_tensor_type(onnx::ValueInfoProto& vi, const std::string& name, int elem, std::vector<std::string> dims) {
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else if (!d.empty()) dim->set_dim_param(d);
  }
}

onnx::AttributeProto* add_attr(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

// A small model exercising every attribute kind, typed and raw tensor data, an
// initializer declared as an input, optional inputs/outputs, domains and metadata.
onnx::ModelProto hand_built_model() {
  using AP = onnx::AttributeProto;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("hand");
  m.set_producer_version("0.1");
  m.set_model_version(3);
  m.set_doc_string("a test model");
  auto* kv = m.add_metadata_props();
  kv->set_key("author");
  kv->set_value("graphfuse");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  op = m.add_opset_import();
  op->set_domain("com.example.ops");
  op->set_version(2);
  auto* g = m.mutable_graph();
  g->set_name("hand");
  set_tensor_type(*g->add_input(), "x", onnx::TensorProto::FLOAT, {"N", "4"});
  set_tensor_type(*g->add_input(), "scale", onnx::TensorProto::FLOAT, {"4"});  // initializer with a default
  auto* w = g->add_initializer();  // typed float_data, converted to raw bytes on import
  w->set_name("scale");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  for (float f : {1.f, 2.f, 3.f, 4.f}) w->add_float_data(f);
  auto* b = g->add_initializer();  // int8 in int32_data: narrowed on import
  b->set_name("Relu");  // clashes with the unnamed Relu node's derived id
  b->set_data_type(onnx::TensorProto::INT8);
  b->add_dims(3);
  for (int v : {-1, 0, 7}) b->add_int32_data(v);

  auto* relu = g->add_node();  // unnamed: id from its output
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("r");
  relu->set_doc_string("keeps its doc string");

  auto* all = g->add_node();
  all->set_name("all");
  all->set_op_type("AllAttrs");
  all->set_domain("com.example.ops");
  all->add_input("r");
  all->add_input("");  // absent optional input
  all->add_input("scale");
  all->add_output("a0");
  all->add_output("");  // absent optional output in the middle
  all->add_output("a2");
  all->add_output("");  // trailing: dropped
  add_attr(*all, "i", AP::INT)->set_i(-5);
  add_attr(*all, "f", AP::FLOAT)->set_f(0.25f);
  add_attr(*all, "s", AP::STRING)->set_s("SAME");
  auto* t = add_attr(*all, "t", AP::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(10);
  t->add_int64_data(-20);
  auto* ints = add_attr(*all, "ints", AP::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  auto* fl = add_attr(*all, "floats", AP::FLOATS);
  fl->add_floats(0.5f);
  fl->add_floats(-1.5f);
  auto* ss = add_attr(*all, "strings", AP::STRINGS);
  ss->add_strings("a");
  ss->add_strings("b");
  auto* ts = add_attr(*all, "tensors", AP::TENSORS)->add_tensors();
  ts->set_data_type(onnx::TensorProto::FLOAT16);
  ts->add_dims(1);
  ts->add_int32_data(0x3c00);
  auto* sub = add_attr(*all, "body", AP::GRAPH)->mutable_g();
  sub->set_name("body");
  auto* c = sub->add_node();
  c->set_op_type("Constant");
  c->add_output("one");
  auto* cv = add_attr(*c, "value_float", AP::FLOAT);
  cv->set_f(1.f);
  auto* outer = sub->add_node();  // reads "r" from the enclosing graph, without an edge
  outer->set_op_type("Identity");
  outer->add_input("r");
  outer->add_output("r_copy");
  set_tensor_type(*sub->add_output(), "one", onnx::TensorProto::FLOAT, {});
  auto* graphs = add_attr(*all, "branches", AP::GRAPHS);
  *graphs->add_graphs() = *sub;
  auto* tp = add_attr(*all, "type", AP::TYPE_PROTO)->mutable_tp();
  tp->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto* st = add_attr(*all, "string_tensor", AP::TENSOR)->mutable_t();
  st->set_data_type(onnx::TensorProto::STRING);
  st->add_string_data("kept opaque");

  auto* k = g->add_node();
  k->set_name("k");
  k->set_op_type("Constant");
  k->add_output("kval");
  auto* kt = add_attr(*k, "value", AP::TENSOR)->mutable_t();
  kt->set_data_type(onnx::TensorProto::FLOAT);
  kt->set_raw_data(std::string("\0\0\x80\x3f", 4));

  auto* add = g->add_node();
  add->set_name("add");
  add->set_op_type("Add");
  add->add_input("a0");
  add->add_input("kval");
  add->add_output("y");
  set_tensor_type(*g->add_value_info(), "r", onnx::TensorProto::FLOAT, {"N", "4"});
  set_tensor_type(*g->add_output(), "y", onnx::TensorProto::FLOAT, {"N", "4"});
  set_tensor_type(*g->add_output(), "a2", onnx::TensorProto::FLOAT, {});
  return m;
}

Graph import(onnx::ModelProto m) { return onnx_io::graph_from_model(m, "<test>", ""); }

}  // namespace

TEST(OnnxImport, HandBuiltModelMapsEveryField) {
  Graph g = import(hand_built_model());
  auto id = [&](const char* name) {
    auto n = g.find(name);
    EXPECT_TRUE(n.has_value()) << name;
    return n.value_or(0);
  };
  // Nodes claim ids first; the unnamed Relu is named after its output "r".
  EXPECT_EQ(g.node(id("r")).op.name(), "Relu");
  EXPECT_EQ(g.node(id("Relu")).op.name(), "Const");
  EXPECT_EQ(g.node(id("scale")).op.name(), "Const");
  EXPECT_EQ(g.inputs().size(), 1u);  // "scale" is an initializer: it is the Const
  const Node& all = g.node(id("all"));
  EXPECT_EQ(all.op.name(), "com.example.ops.AllAttrs");
  EXPECT_EQ(all.op.domain(), "com.example.ops");
  ASSERT_EQ(all.inputs.size(), 3u);
  EXPECT_FALSE(all.inputs[1].valid());
  ASSERT_EQ(all.outputs.size(), 3u);
  EXPECT_EQ(all.outputs[1].name, "");
  EXPECT_EQ(*all.attrs.get_if<std::int64_t>("i"), -5);
  EXPECT_EQ(*all.attrs.get_if<float>("f"), 0.25f);
  EXPECT_EQ(*all.attrs.get_if<std::string>("s"), "SAME");
  EXPECT_EQ(all.attrs.get_if<Tensor>("t")->as<std::int64_t>()[1], -20);
  EXPECT_EQ(*all.attrs.get_if<std::vector<std::int64_t>>("ints"), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(*all.attrs.get_if<std::vector<float>>("floats"), (std::vector<float>{0.5f, -1.5f}));
  EXPECT_EQ(all.attrs.get_if<std::vector<std::string>>("strings")->size(), 2u);
  const auto& half = all.attrs.get_if<std::vector<Tensor>>("tensors")->at(0);
  EXPECT_EQ(half.dtype, DType::Float16);
  EXPECT_EQ(half.as<std::uint16_t>()[0], 0x3c00);
  EXPECT_EQ(all.attrs.get_if<Opaque>("body")->kind, onnx_io::kOpaqueGraph);
  EXPECT_EQ(all.attrs.get_if<Opaque>("branches")->kind, onnx_io::kOpaqueAttribute);
  EXPECT_EQ(all.attrs.get_if<Opaque>("type")->kind, onnx_io::kOpaqueType);
  EXPECT_EQ(all.attrs.get_if<Opaque>("string_tensor")->kind, onnx_io::kOpaqueAttribute);
  const Tensor* scale = constant_tensor(g, {id("scale"), 0});
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->as<float>()[3], 4.f);
  const Tensor* i8 = constant_tensor(g, {id("Relu"), 0});
  EXPECT_EQ(i8->as<std::int8_t>()[0], -1);
  EXPECT_EQ(g.value_name({id("Relu"), 0}), "Relu");
  EXPECT_EQ(*constant_tensor(g, {id("k"), 0})->as<float>(), 1.f);
  const ValueType& x = g.node(g.inputs()[0]).outputs[0].type;
  EXPECT_EQ(x.shape, (std::vector<std::int64_t>{-1, 4}));
  EXPECT_EQ(x.dim_params, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(g.node(id("r")).outputs[0].type.dim_params[0], "N");  // from value_info
  EXPECT_EQ(onnx_io::opset_version(g, "ai.onnx"), 13);
  EXPECT_EQ(onnx_io::opset_version(g, "com.example.ops"), 2);
  EXPECT_EQ(*g.properties().get_if<std::string>(onnx_io::kProducerName), "hand");
}

TEST(OnnxRoundTrip, HandBuiltModel) {
  Graph g = import(hand_built_model());
  onnx::ModelProto out = onnx_io::model_from_graph(g);
  EXPECT_NO_THROW(onnx::checker::check_model(out));
  ASSERT_EQ(out.graph().input_size(), 2);
  EXPECT_EQ(out.graph().input(1).name(), "scale");  // the default-valued input stays declared
  EXPECT_EQ(out.graph().node(0).doc_string(), "keeps its doc string");
  EXPECT_EQ(out.graph().node(1).output_size(), 3);
  EXPECT_EQ(out.graph().node(1).output(1), "");
  expect_same_graph(g, import(out));
  // Deterministic bytes, and the streaming writer gives protobuf's own serialization.
  EXPECT_EQ(out.SerializeAsString(), onnx_io::model_from_graph(g).SerializeAsString());
  EXPECT_EQ(out.SerializeAsString(), onnx_io::serialize_model(g));
}

TEST(OnnxRoundTrip, FileAndModelLevelFieldsSurvive) {
  TempDir dir;
  onnx::ModelProto m = hand_built_model();
  auto* fn = m.add_functions();  // local functions are kept without being interpreted
  fn->set_name("MyFn");
  fn->set_domain("com.example.ops");
  std::ofstream(dir.file("in.onnx"), std::ios::binary) << m.SerializeAsString();
  Graph g = load_onnx(dir.file("in.onnx"));
  EXPECT_EQ(g.source_file, dir.file("in.onnx"));
  save_onnx(g, dir.file("out.onnx"));
  std::size_t files = 0;  // the atomic write leaves no temporary behind
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
  EXPECT_EQ(files, 2u);
  onnx::ModelProto back = onnx_io::read_model_proto(dir.file("out.onnx"));
  ASSERT_EQ(back.functions_size(), 1);
  EXPECT_EQ(back.functions(0).name(), "MyFn");
  EXPECT_EQ(back.metadata_props(0).value(), "graphfuse");
  EXPECT_EQ(back.model_version(), 3);
  expect_same_graph(g, load_onnx(dir.file("out.onnx")));
}

TEST(OnnxExport, NewDomainGetsAnOpsetImportAndNamesAreDerived) {
  Graph g = import(hand_built_model());
  NodeId add = *g.find("add");
  NodeId fused = g.add_node("add_fused", OpType::intern("com.microsoft.FusedConv"),
                            {g.node(add).inputs[0], g.node(add).inputs[1]}, {}, 1);
  g.attrs(fused).set("activation", std::string("Relu"));
  g.attrs(fused).set("flag", true);
  // A rewriter keeps the root's output type: ONNX needs typed, shaped graph outputs.
  g.output_infos(fused)[0].type = g.node(add).outputs[0].type;
  g.replace_all_uses({add, 0}, {fused, 0});
  g.remove_node(add);
  onnx::ModelProto out = onnx_io::model_from_graph(g);
  EXPECT_NO_THROW(onnx::checker::check_model(out));
  bool found = false;
  for (const auto& o : out.opset_import()) found = found || (o.domain() == "com.microsoft" && o.version() == 1);
  EXPECT_TRUE(found);
  const auto& last = out.graph().node(out.graph().node_size() - 1);
  EXPECT_EQ(last.domain(), "com.microsoft");
  EXPECT_EQ(last.op_type(), "FusedConv");
  EXPECT_EQ(last.output(0), "add_fused");
  EXPECT_EQ(out.graph().output(0).name(), "add_fused");
  EXPECT_EQ(last.attribute(1).i(), 1);  // bool -> INT
}

TEST(OnnxRoundTrip, ProvenanceTravelsAsMetadataNotAsAnAttribute) {
  Graph g = import(hand_built_model());
  NodeId add = *g.find("add");
  g.attrs(add).set("_rule", std::string("my_rule"));
  onnx::ModelProto out = onnx_io::model_from_graph(g);
  // ONNX Runtime rejects unknown attributes, so `_rule` must not be one.
  for (const auto& n : out.graph().node())
    for (const auto& a : n.attribute()) EXPECT_NE(a.name(), "_rule");
  bool in_metadata = false;
  for (const auto& kv : out.metadata_props())
    in_metadata = in_metadata || (kv.key() == "graphfuse.attr:add:_rule" && kv.value() == "my_rule");
  EXPECT_TRUE(in_metadata);
  Graph back = import(out);
  const auto* rule = back.node(*back.find("add")).attrs.get_if<std::string>("_rule");
  ASSERT_NE(rule, nullptr);
  EXPECT_EQ(*rule, "my_rule");
  // ... and does not pile up as plain metadata on a second round trip.
  EXPECT_EQ(onnx_io::model_from_graph(back).metadata_props_size(), out.metadata_props_size());
}

TEST(OnnxExport, SubgraphReadingALostOuterValueIsAnError) {
  Graph g = import(hand_built_model());
  g.output_infos(*g.find("r"))[0].name = "renamed";  // the edge follows, the subgraph cannot
  try {
    onnx_io::model_from_graph(g);
    FAIL() << "exported a subgraph that reads a value no longer in the graph";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'all' (com.example.ops.AllAttrs): subgraph attribute 'body' reads value 'r'"),
              std::string::npos) << e.what();
  }
}

TEST(OnnxImport, ExternalDataIsReadRelativeToTheModel) {
  TempDir dir;
  onnx::ModelProto m = hand_built_model();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add_kv = [&](const char* k, const char* v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add_kv("location", "weights.bin");
  add_kv("offset", "4");
  add_kv("length", "16");
  std::vector<float> data{9.f, 1.f, 2.f, 3.f, 4.f};
  std::ofstream(dir.file("weights.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(data.data()), 20);
  std::ofstream(dir.file("m.onnx"), std::ios::binary) << m.SerializeAsString();
  Graph g = load_onnx(dir.file("m.onnx"));
  const Tensor* t = constant_tensor(g, {*g.find("scale"), 0});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->as<float>()[0], 1.f);
  EXPECT_EQ(t->as<float>()[3], 4.f);
  add_kv("location", "../escape.bin");  // the last location wins and must be refused
  std::ofstream(dir.file("bad.onnx"), std::ios::binary) << m.SerializeAsString();
  EXPECT_THROW(load_onnx(dir.file("bad.onnx")), Error);
}

TEST(OnnxImport, ErrorsNameTheFileAndTheNode) {
  TempDir dir;
  std::ofstream(dir.file("junk.onnx"), std::ios::binary) << "this is not protobuf \xff\xff\xff";
  try {
    load_onnx(dir.file("junk.onnx"));
    FAIL() << "junk parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.loc().file, dir.file("junk.onnx"));
  }
  EXPECT_THROW(load_onnx(dir.file("missing.onnx")), Error);
  auto expect_error = [](onnx::ModelProto m, const std::string& needle) {
    try {
      import(std::move(m));
      ADD_FAILURE() << "no error, expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(e.loc().file, "<test>");
    }
  };
  onnx::ModelProto m = hand_built_model();
  m.mutable_graph()->mutable_node(3)->set_input(0, "nowhere");
  expect_error(m, "node 'add' (Add): input 'nowhere'");
  m = hand_built_model();
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_type(onnx::AttributeProto::UNDEFINED);
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->clear_i();
  expect_error(m, "node 'all' (com.example.ops.AllAttrs), attribute 'i'");
  m = hand_built_model();
  m.mutable_graph()->mutable_initializer(0)->add_float_data(5.f);
  expect_error(m, "initializer 'scale'");
  m = hand_built_model();
  m.mutable_graph()->mutable_initializer(1)->set_data_type(onnx::TensorProto::STRING);
  expect_error(m, "initializer 'Relu'");
  m = hand_built_model();
  m.mutable_graph()->mutable_output(0)->set_name("ghost");
  expect_error(m, "graph output 'ghost'");
  m = hand_built_model();
  m.mutable_graph()->mutable_node(3)->set_output(0, "r");
  expect_error(m, "value 'r' is defined more than once");
}

TEST(OnnxExport, ConstWithoutDataIsAnError) {
  Graph g;
  NodeId x = g.add_input("x", ValueType{DType::Float32, {2}, true, {}});
  Attributes shape_only;
  shape_only.set("value", Tensor{DType::Float32, {2}, nullptr});
  NodeId c = g.add_node("c", OpType::intern(ops::kConst), {}, shape_only);
  g.add_output({g.add_node("sum", OpType::intern("Add"), {{x, 0}, {c, 0}}), 0});
  try {
    save_onnx(g, "/nonexistent/out.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'c' (Const)"), std::string::npos) << e.what();
  }
}

// Every real model: import -> export -> import gives the same graph; the export passes
// the ONNX checker and is byte-for-byte deterministic.
TEST(OnnxRoundTrip, SharedModels) {
  const fs::path models = fs::path(GRAPHFUSE_SOURCE_DIR) / ".." / "shared" / "models";
  if (!fs::is_directory(models)) GTEST_SKIP() << models << " is absent";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(models))
    if (e.path().extension() == ".onnx") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "no .onnx files in " << models;
  TempDir dir;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    auto t0 = std::chrono::steady_clock::now();
    Graph g = load_onnx(file.string());
    double import_ms = ms_since(t0);
    const std::string out = dir.file(file.filename().string());
    t0 = std::chrono::steady_clock::now();
    save_onnx(g, out);
    double export_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    EXPECT_NO_THROW(onnx::checker::check_model(out)) << out;
    double check_ms = ms_since(t0);
    Graph back = load_onnx(out);
    expect_same_graph(g, back);
    save_onnx(back, out + ".again");
    std::ifstream a(out, std::ios::binary), b(out + ".again", std::ios::binary);
    std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
    EXPECT_TRUE(sa == sb) << "export is not deterministic";
    EXPECT_TRUE(sa == onnx_io::model_from_graph(g).SerializeAsString()) << "streamed bytes differ from protobuf's";
    // These files were written by protobuf and carry nothing graphfuse normalizes away,
    // so an unchanged model comes back byte for byte.
    std::ifstream orig(file, std::ios::binary);
    EXPECT_TRUE(sa == std::string((std::istreambuf_iterator<char>(orig)), {})) << "bytes differ from the original";
    std::printf("[ onnx     ] %-34s %4zu nodes  import %7.1f ms  export %7.1f ms  check_model %6.1f ms\n",
                file.filename().c_str(), g.size(), import_ms, export_ms, check_ms);
  }
}
