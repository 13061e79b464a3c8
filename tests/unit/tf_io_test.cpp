// TensorFlow formats: GraphDef bytes and TF.js model.json read into graphs, written back,
// and every damaged input refused with an error that says what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "graphfuse/io.h"
#include "graphfuse/tensorflow.h"

using namespace graphfuse;

namespace {

// Protobuf wire encoding by hand, so that the tests can write exactly the damaged bytes
// they mean (the generated classes would refuse to).
std::string varint(std::uint64_t v) {
  std::string out;
  do {
    char b = static_cast<char>(v & 0x7f);
    v >>= 7;
    if (v) b = static_cast<char>(b | 0x80);
    out.push_back(b);
  } while (v);
  return out;
}
std::string field(int number, std::string_view bytes) {
  return varint(static_cast<std::uint64_t>(number) << 3 | 2) + varint(bytes.size()) + std::string(bytes);
}
std::string int_field(int number, std::uint64_t v) { return varint(static_cast<std::uint64_t>(number) << 3) + varint(v); }
std::string attr(std::string_view key, const std::string& value) { return field(5, field(1, key) + field(2, value)); }
std::string node(std::string_view name, std::string_view op, std::vector<std::string> inputs = {},
                 std::string attrs = {}) {
  std::string n = field(1, name) + field(2, op);
  for (const auto& i : inputs) n += field(3, i);
  return field(1, n + attrs);
}
std::string float_tensor(std::vector<std::int64_t> shape, std::string content) {
  std::string dims;
  for (auto d : shape) dims += field(2, int_field(1, static_cast<std::uint64_t>(d)));
  return field(8, int_field(1, 1) + field(2, dims) + field(4, content));
}
std::string floats(std::vector<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("graphfuse_tf_io_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

void write(const std::filesystem::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

}  // namespace

TEST(GraphDef, ReadsNodesPortsAttributesAndTensorsAndWritesTheSameBytes) {
  std::string bytes = node("x", "Placeholder", {}, attr("dtype", int_field(6, 1))) +
                      node("w", "Const", {}, attr("value", float_tensor({2}, floats({1.5f, -2.0f}))) + attr("dtype", int_field(6, 1))) +
                      node("s", "Split", {"x", "w"}, attr("num_split", int_field(3, 2))) +
                      node("y", "AddV2", {"s:1", "s"}, attr("padding", field(2, "SAME"))) +
                      field(4, int_field(1, 1286));
  Graph g = parse_graphdef(bytes, "t.pb");
  ASSERT_EQ(g.size(), 4u);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.node(g.inputs()[0]).id, "x");
  NodeId y = *g.find("y");
  EXPECT_EQ(g.node(y).inputs[0].port, 1u);
  EXPECT_EQ(g.node(g.node(y).inputs[0].node).id, "s");
  EXPECT_EQ(g.node(*g.find("s")).outputs.size(), 2u);
  EXPECT_EQ(*g.node(*g.find("s")).attrs.get_if<std::int64_t>("num_split"), 2);
  EXPECT_EQ(*g.node(y).attrs.get_if<std::string>("padding"), "SAME");
  const Tensor* w = g.node(*g.find("w")).attrs.get_if<Tensor>("value");
  ASSERT_TRUE(w && w->has_data());
  EXPECT_EQ(w->as<float>()[1], -2.0f);
  ASSERT_EQ(g.outputs().size(), 1u);  // y: nothing reads it
  EXPECT_EQ(write_graphdef(g), bytes);
}

TEST(GraphDef, ShortTypedValuesRepeatTheLastOneAsTensorFlowDoes) {
  std::string t = field(8, int_field(1, 1) + field(2, field(2, int_field(1, 3))) + field(5, floats({7.0f})));
  Graph g = parse_graphdef(node("c", "Const", {}, attr("value", t)), "t.pb");
  const Tensor* v = g.node(*g.find("c")).attrs.get_if<Tensor>("value");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->as<float>()[2], 7.0f);
}

TEST(GraphDef, DamagedInputsAreRefusedWithAReason) {
  auto err = [](const std::string& bytes) { return error_of([&] { parse_graphdef(bytes, "bad.pb"); }); };
  EXPECT_NE(err("\x0a\xff\xff\xff").find("not a valid GraphDef"), std::string::npos);
  EXPECT_NE(err(node("a", "Relu", {"nowhere"})).find("'nowhere', which no node produces"), std::string::npos);
  EXPECT_NE(err(node("a", "Relu") + node("a", "Relu")).find("two nodes are named 'a'"), std::string::npos);
  EXPECT_NE(err(node("a", "Relu", {"b"}) + node("b", "Relu", {"a"})).find("cycle"), std::string::npos);
  EXPECT_NE(err(node("a", "Relu", {"a:x"})).find("is not 'name'"), std::string::npos);
  EXPECT_NE(err(node("", "Relu")).find("has no name"), std::string::npos);
  EXPECT_NE(err(node("c", "Const", {}, attr("value", float_tensor({3}, floats({1.0f}))))).find("content bytes"),
            std::string::npos);
  EXPECT_NE(err(node("c", "Const", {}, attr("value", float_tensor({-4}, "")))).find("attribute 'value'"),
            std::string::npos);
  std::string chain;  // a long chain: the ordering walk must not recurse
  for (int k = 0; k < 200000; ++k)
    chain += node("n" + std::to_string(k), "Relu", k ? std::vector<std::string>{"n" + std::to_string(k - 1)}
                                                     : std::vector<std::string>{});
  EXPECT_EQ(parse_graphdef(chain, "chain.pb").size(), 200000u);
}

TEST(GraphDef, Tf1WhileLoopReadsWithoutACycleAndWritesTheSameBytes) {
  // Enter -> Merge(enter, next) -> AddV2 -> NextIteration -> back into the Merge; Exit reads the Merge.
  const std::string bytes = node("x", "Placeholder") + node("enter", "Enter", {"x"}) +
                            node("merge", "Merge", {"enter", "next"}) + node("add", "AddV2", {"merge", "x"}) +
                            node("next", "NextIteration", {"add"}) + node("exit", "Exit", {"merge"});
  Graph g = parse_graphdef(bytes, "loop.pb");
  auto merge = g.find("merge");
  ASSERT_TRUE(merge);
  EXPECT_EQ(g.node(*merge).inputs.size(), 1u);  // the loop edge is set aside
  const auto* back = g.node(*merge).attrs.get_if<std::vector<std::string>>("tf.back_edges");
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(*back, std::vector<std::string>{"1 next"});
  EXPECT_EQ(write_graphdef(g), bytes);
  // Any other cycle is still refused.
  EXPECT_NE(error_of([] { parse_graphdef(node("m", "Merge", {"a"}) + node("a", "Identity", {"m"}), "c.pb"); })
                .find("cycle"),
            std::string::npos);
}

TEST(TfjsModel, ReadsQuantizedWeightsAndWritesTheSameShards) {
  auto dir = temp_dir("read");
  // w: uint8-quantized float32 (v = q * 0.5 - 1); i: int32; b: bool.
  std::string shard = std::string("\x00\x02\x04", 3);
  std::int32_t ints[2] = {7, -3};
  shard.append(reinterpret_cast<const char*>(ints), 8);
  shard += std::string("\x01\x00", 2);
  write(dir / "group1-shard1of1.bin", shard);
  write(dir / "model.json", R"({"format":"graph-model","modelTopology":{"node":[
    {"name":"x","op":"Placeholder","attr":{"dtype":{"type":"DT_FLOAT"},"shape":{"shape":{"dim":[{"size":"-1"},{"size":"3"}]}}}},
    {"name":"w","op":"Const","attr":{"value":{"tensor":{"dtype":"DT_FLOAT","tensorShape":{"dim":[{"size":"3"}]}}},"dtype":{"type":"DT_FLOAT"}}},
    {"name":"i","op":"Const","attr":{"value":{"tensor":{"dtype":"DT_INT32","tensorShape":{"dim":[{"size":"2"}]}}},"dtype":{"type":"DT_INT32"}}},
    {"name":"b","op":"Const","attr":{"value":{"tensor":{"dtype":"DT_BOOL","tensorShape":{"dim":[{"size":"2"}]}}},"dtype":{"type":"DT_BOOL"}}},
    {"name":"y","op":"Mul","input":["x","w"],"attr":{"T":{"type":"DT_FLOAT"}}}],"versions":{"producer":1}},
    "weightsManifest":[{"paths":["group1-shard1of1.bin"],"weights":[
      {"name":"w","shape":[3],"dtype":"float32","quantization":{"dtype":"uint8","scale":0.5,"min":-1}},
      {"name":"i","shape":[2],"dtype":"int32"},{"name":"b","shape":[2],"dtype":"bool"}]}]})");
  Graph g = load_graph((dir / "model.json").string());
  const Tensor* w = g.node(*g.find("w")).attrs.get_if<Tensor>("value");
  ASSERT_TRUE(w && w->dtype == DType::Float32);
  EXPECT_EQ(w->as<float>()[0], -1.0f);
  EXPECT_EQ(w->as<float>()[2], 1.0f);
  EXPECT_EQ(g.node(*g.find("i")).attrs.get_if<Tensor>("value")->as<std::int32_t>()[1], -3);
  EXPECT_EQ(g.node(*g.find("b")).attrs.get_if<Tensor>("value")->dtype, DType::Bool);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.node(g.inputs()[0]).outputs[0].type.shape, (std::vector<std::int64_t>{-1, 3}));
  auto out = temp_dir("write");
  save_graph(g, (out / "model.json").string());
  EXPECT_EQ(read_file((out / "group1-shard1of1.bin").string()), shard);
  Graph back = load_graph((out / "model.json").string());
  EXPECT_EQ(write_graphdef(back), write_graphdef(g));
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(out);
}

TEST(TfjsModel, DamagedModelsAreRefusedWithAReason) {
  auto dir = temp_dir("bad");
  auto err = [&](const std::string& json, const std::string& shard = "") {
    write(dir / "model.json", json);
    write(dir / "s.bin", shard);
    return error_of([&] { load_graph((dir / "model.json").string()); });
  };
  std::string head = R"({"format":"graph-model","modelTopology":{"node":[{"name":"w","op":"Const"}]},)";
  EXPECT_NE(err("{\"format\":\"graph-model\",\n \"modelTopology\": [").find(":2:"), std::string::npos);
  EXPECT_NE(err(R"({"format":"graph-model"})").find("no modelTopology"), std::string::npos);
  EXPECT_NE(err(R"({"format":"layers-model","modelTopology":{}})").find("graph-model"), std::string::npos);
  EXPECT_NE(err(head + R"("weightsManifest":[{"paths":["s.bin"],"weights":[{"name":"w","shape":[4],"dtype":"float32"}]}]})", "abc")
                .find("needs 16 bytes"),
            std::string::npos);
  EXPECT_NE(err(head + R"("weightsManifest":[{"paths":["s.bin"],"weights":[{"name":"v","shape":[1],"dtype":"float32"}]}]})",
                std::string(4, '\0'))
                .find("names no Const"),
            std::string::npos);
  EXPECT_NE(err(head + R"("weightsManifest":[{"paths":["../s.bin"],"weights":[]}]})").find("not a file name"),
            std::string::npos);
  EXPECT_NE(err(head + R"("weightsManifest":[{"paths":["s.bin"],"weights":[{"name":"w","shape":[1],"dtype":"complex64"}]}]})")
                .find("complex64"),
            std::string::npos);
  EXPECT_NE(err(R"({"format":"graph-model","modelTopology":{"node":[{"name":"a","op":"Relu","attr":{"T":{"type":"DT_NOPE"}}}]}})")
                .find("attribute 'T'"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(TfjsModel, DetectedByContentNotByName) {
  EXPECT_TRUE(looks_like_tfjs_model(" {\n  \"format\": \"graph-model\""));
  EXPECT_TRUE(looks_like_tfjs_model("{\"modelTopology\":{}}"));
  EXPECT_FALSE(looks_like_tfjs_model("{\"inputs\": []}"));
  EXPECT_FALSE(looks_like_tfjs_model("[1]"));
}
