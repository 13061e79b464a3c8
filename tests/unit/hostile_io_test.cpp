// Hostile inputs at the edges: files a first fuzzing run (issue 16) turned into crashes,
// hangs, or exit-0 outputs no reader accepts. Each case must end in exit 1 with a message
// that names the file (and a position where the format has one), the -o file untouched; or
// exit 0 with an output that loads again and re-saves to the same bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli_helpers.h"
#include "graphfuse/io.h"
#include "io/onnx_convert.h"

using namespace graphfuse;
using namespace graphfuse::testutil;
namespace fs = std::filesystem;

namespace {

class HostileIo : public TempDirTest {
 protected:
  /// Runs the CLI and expects exit 1 with `what` in the output.
  CliRun fails(const std::string& args, const std::string& what) {
    CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << args << "\n" << r.out;
    return r;
  }
  /// An output file that holds "old": a failed command must leave it so.
  std::string old_file(const std::string& name) { return write(name, "old"); }

  void write_model(const std::string& name, const onnx::ModelProto& m) {
    std::ofstream((dir_ / name), std::ios::binary) << m.SerializeAsString();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
};

void set_tensor_type(onnx::ValueInfoProto& vi, int elem, std::initializer_list<std::int64_t> dims) {
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (auto d : dims) shape->add_dim()->set_dim_value(d);
}

/// x -> Shape -> Gather(indices 0) -> y: libonnx's data propagation crashed on this when x
/// had no type (SIGSEGV inside InferShapes, issue 16).
onnx::ModelProto shape_gather_model(bool typed_input) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* x = g->add_input();
  x->set_name("x");
  if (typed_input) set_tensor_type(*x, 1, {2, 3});
  auto* idx = g->add_initializer();
  idx->set_name("i");
  idx->set_data_type(7);
  idx->add_int64_data(0);
  auto* s = g->add_node();
  s->set_name("shape");
  s->set_op_type("Shape");
  s->add_input("x");
  s->add_output("s");
  auto* ga = g->add_node();
  ga->set_name("gather");
  ga->set_op_type("Gather");
  ga->add_input("s");
  ga->add_input("i");
  ga->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

}  // namespace

// ---- ONNX ---------------------------------------------------------------------------------

TEST_F(HostileIo, UntypedOnnxInputIsAnErrorNotACrash) {
  write_model("bad.onnx", shape_gather_model(false));
  for (const char* cmd : {"info", "dot"}) {
    std::string args = std::string(cmd) + " " + path("bad.onnx") + (std::strcmp(cmd, "dot") == 0 ? " -o " + path("o.dot") : "");
    fails(args, path("bad.onnx") + ": error: graph input 'x' (read by node 'shape' (Shape)) has no type");
  }
  EXPECT_FALSE(fs::exists(dir_ / "o.dot"));
  // With a type the same model loads (inference types y).
  write_model("good.onnx", shape_gather_model(true));
  EXPECT_EQ(run_cli("info " + path("good.onnx")).code, 0);
}

TEST_F(HostileIo, OnnxReferencesAreCheckedBeforeInference) {
  onnx::ModelProto m = shape_gather_model(true);
  m.mutable_graph()->mutable_node(1)->set_input(1, "nowhere");
  write_model("dangling.onnx", m);
  fails("info " + path("dangling.onnx"), "node 'gather' (Gather): input 'nowhere' is not a graph input");
  onnx::ModelProto twice = shape_gather_model(true);
  twice.mutable_graph()->mutable_node(1)->set_output(0, "s");
  write_model("twice.onnx", twice);
  fails("info " + path("twice.onnx"), "node 'gather' (Gather): value 's' is defined more than once");
  onnx::ModelProto neg = shape_gather_model(true);
  neg.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-3);
  write_model("neg.onnx", neg);
  fails("info " + path("neg.onnx"), "graph input 'x' (read by node 'shape' (Shape)) has a negative dimension -3");
}

TEST_F(HostileIo, GraphTextToOnnxRefusesUntypedInputsAndWritesNothing) {
  std::string in = write("g.graph", "input x\ns = Shape(x)\ni = Const() {value = tensor(int64, [], [0])}\n"
                                    "y = Gather(s, i)\noutput y\n");
  std::string out = old_file("y.onnx");
  fails("apply --rules " + src("rules/seed.yaml") + " " + in + " -o " + out,
        "graph input 'x' has no element type, which ONNX requires");
  EXPECT_EQ(slurp(out), "old");
}

TEST_F(HostileIo, TypedYamlToOnnxLoadsAndResavesByteIdentical) {
  std::string in = write("g.yaml", "inputs: [x]\noutputs: [r]\nnodes:\n"
                                   "  - {id: x, op_type: Input, types: [{dtype: float32, shape: [1, 4]}]}\n"
                                   "  - {id: r, op_type: Relu, inputs: [x]}\n");
  std::string rules = src("rules/seed.yaml");
  ASSERT_EQ(run_cli("apply -q --rules " + rules + " " + in + " -o " + path("a.onnx")).code, 0);
  CliRun again = run_cli("apply -q --rules " + rules + " " + path("a.onnx") + " -o " + path("b.onnx"));
  ASSERT_EQ(again.code, 0) << again.out;
  // Was: the second save gained an explicit empty opset_import domain.
  EXPECT_EQ(slurp(dir_ / "a.onnx"), slurp(dir_ / "b.onnx"));
  EXPECT_EQ(run_cli("info " + path("b.onnx")).code, 0);
}

// The .graph writer keeps value types, so a model saved as .graph exports to ONNX again
// (it used to drop them, and the export refused the untyped input).
TEST_F(HostileIo, OnnxThroughGraphTextKeepsTypes) {
  std::string in = write("g.yaml", "inputs: [x]\noutputs: [r]\nnodes:\n"
                                   "  - {id: x, op_type: Input, types: [{dtype: float32, shape: [N, 4]}]}\n"
                                   "  - {id: r, op_type: Relu, inputs: [x]}\n");
  ASSERT_EQ(run_cli("convert " + in + " " + path("a.onnx")).code, 0);
  ASSERT_EQ(run_cli("convert " + path("a.onnx") + " " + path("a.graph")).code, 0);
  EXPECT_NE(slurp(dir_ / "a.graph").find("input x: float32[N, 4]\n"), std::string::npos) << slurp(dir_ / "a.graph");
  CliRun back = run_cli("convert " + path("a.graph") + " " + path("b.onnx"));
  ASSERT_EQ(back.code, 0) << back.out;
  ASSERT_EQ(run_cli("convert " + path("b.onnx") + " " + path("b.graph")).code, 0);
  EXPECT_EQ(slurp(dir_ / "a.graph"), slurp(dir_ / "b.graph"));
}

TEST_F(HostileIo, GraphInputThatIsNoInputNodeIsRefusedOnRead) {
  std::string in = write("g.yaml", "inputs: [x, r]\nnodes:\n  - {id: x, op_type: Input}\n"
                                   "  - {id: r, op_type: Relu, inputs: [x]}\n");
  std::string out = old_file("o.onnx");
  fails("apply --rules " + src("rules/seed.yaml") + " " + in + " -o " + out,
        "g.yaml:1:13: error: graph input 'r' is a Relu node; a graph input must be an Input node");
  EXPECT_EQ(slurp(out), "old");
  std::string twice = write("t.yaml", "inputs: [x, x]\nnodes:\n  - {id: x, op_type: Input}\n");
  fails("info " + twice, "t.yaml:1:13: error: graph input 'x' is listed twice");
}

TEST(HostileIoExport, GraphInputThatIsNoInputNodeIsNotExported) {
  Graph g = parse_graph_yaml("nodes:\n  - {id: x, op_type: Input, types: [{dtype: float32}]}\n"
                             "  - {id: r, op_type: Relu, inputs: [x]}\n");
  g.set_inputs_list({*g.find("x"), *g.find("r")});  // what a program could build
  try {
    onnx_io::serialize_model(g);
    FAIL() << "exported a Relu as a graph input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph input 'r' is a Relu node"), std::string::npos) << e.what();
  }
}

// ---- values every writer must write back ------------------------------------------------

TEST_F(HostileIo, Uint64AboveInt64IsRefusedByTextWritersAndKeptByOnnxAndGfb) {
  onnx::ModelProto m = shape_gather_model(true);
  auto* big = m.mutable_graph()->add_initializer();
  big->set_name("big");
  big->set_data_type(13);  // uint64
  big->add_dims(2);
  big->add_uint64_data(1);
  big->add_uint64_data(18446744073709551615ull);
  write_model("big.onnx", m);
  std::string rules = src("rules/seed.yaml");
  for (const char* ext : {"yaml", "json", "graph"}) {
    std::string out = old_file(std::string("o.") + ext);
    fails("apply -q --rules " + rules + " " + path("big.onnx") + " -o " + out,
          path("big.onnx") + ": error: node 'big', attribute 'value': uint64 element 1 is 18446744073709551615, above 2^63-1");
    EXPECT_EQ(slurp(out), "old") << ext;
  }
  ASSERT_EQ(run_cli("apply -q --rules " + rules + " " + path("big.onnx") + " -o " + path("o.gfb")).code, 0);
  ASSERT_EQ(run_cli("apply -q --rules " + rules + " " + path("o.gfb") + " -o " + path("p.gfb")).code, 0);
  EXPECT_EQ(slurp(dir_ / "o.gfb"), slurp(dir_ / "p.gfb"));
}

TEST(HostileIoValues, GfbRefusesWhatTheTextReadersRefuse) {
  auto gfb_error = [](const Graph& g) {
    try {
      parse_graph_binary(write_graph_binary(g), "g.gfb");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Graph g;
  Tensor t;
  t.dtype = DType::Float32;
  t.shape = {2, -3};
  Attributes a;
  a.set("value", t);
  g.add_node("c", OpType::intern("Const"), {}, a);
  // Was accepted, then written by the JSON writer as a shape no reader takes.
  EXPECT_NE(gfb_error(g).find("g.gfb: error: malformed .gfb file: tensor dimensions must not be negative"),
            std::string::npos) << gfb_error(g);
  Graph h;
  NodeId x = h.add_input("x", ValueType{DType::Float32, {1, -7}, true, {}});
  (void)x;
  EXPECT_NE(gfb_error(h).find("value type: dimension -7"), std::string::npos) << gfb_error(h);
  Graph k;
  t.shape = {std::int64_t{1} << 30, std::int64_t{1} << 30};
  a.set("value", t);
  k.add_node("c", OpType::intern("Const"), {}, a);
  EXPECT_NE(gfb_error(k).find("tensor shape is too large"), std::string::npos) << gfb_error(k);
}

TEST(HostileIoValues, YamlValueTypesRefuseDimensionsBelowMinusOne) {
  try {
    parse_graph_yaml("nodes:\n  - {id: x, op_type: Input, types: [{dtype: float32, shape: [2, -5]}]}\n", "t.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:2:37: error: node 'x': a type: dimension -5"), std::string::npos)
        << e.what();
  }
}

TEST(HostileIoValues, DefaultOutputNamesResaveByteIdentical) {
  // An output explicitly named like its default (`s:1`, from ONNX or a program) was quoted
  // on the first save and plain on the second.
  Graph g = parse_graph_text("input x\ns, s:1 = Split(x)\noutput s, s:1\n");
  NodeId s = *g.find("s");
  g.output_infos(s)[0].name = "s";
  g.output_infos(s)[1].name = "s:1";
  std::string first = write_graph_text(g);
  EXPECT_EQ(first, write_graph_text(parse_graph_text(first)));
  EXPECT_EQ(first.find('`'), std::string::npos) << first;
  for (auto writer : {&write_graph_yaml, &write_graph_json}) {
    std::string y = writer(g);
    EXPECT_EQ(y, writer(parse_graph_yaml(y, writer == &write_graph_json ? "g.json" : "g.yaml")));
  }
}

TEST(HostileIoValues, BoolTensorBytesOtherThanOneAreWrittenAsTrue) {
  Graph g;
  Tensor t;
  t.dtype = DType::Bool;
  t.shape = {3};
  t.data = std::make_shared<const std::string>(std::string("\x00\x01\x07", 3));
  Attributes a;
  a.set("value", t);
  g.add_node("c", OpType::intern("Const"), {}, a);
  std::string text = write_graph_text(g);
  EXPECT_NE(text.find("[0, 1, 1]"), std::string::npos) << text;
  EXPECT_EQ(text, write_graph_text(parse_graph_text(text)));
}

// ---- YAML expansion and nesting -----------------------------------------------------------

TEST_F(HostileIo, BillionLaughsYamlFailsFast) {
  // Nine levels of ten aliases: 10^9 values once expanded; the file is about 500 bytes.
  std::string y = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += (k ? ", " : "") + prev;
    y += "]\n";
  }
  y += "nodes: []\n";
  ASSERT_LT(y.size(), 600u);
  std::string in = write("laughs.yaml", y);
  auto t0 = std::chrono::steady_clock::now();
  for (const char* cmd : {"info", "dot"}) {
    std::string args = std::string(cmd) + " " + in + (std::string(cmd) == "dot" ? " -o " + path("o.dot") : "");
    fails(args, "laughs.yaml:");
    fails(args, "error: the YAML document expands to more than");
  }
  std::string out = old_file("o.yaml");
  fails("apply --rules " + src("rules/seed.yaml") + " " + in + " -o " + out, "anchors and aliases");
  EXPECT_EQ(slurp(out), "old");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20.0) << "three commands; each was 19-36 s and 9.4 GB";
}

TEST(HostileIoNesting, DeepYamlAndAnchorChainsAreBounded) {
  auto error = [](const std::string& text) {
    try {
      parse_graph_yaml(text, "d.yaml");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Over yaml-cpp's own depth guard (about 500 levels), which says only "bad file".
  std::string deep = "nodes: " + std::string(1500, '[') + std::string(1500, ']') + "\n";
  EXPECT_NE(error(deep).find("d.yaml:1:"), std::string::npos) << error(deep);
  EXPECT_NE(error(deep).find("values nested too deeply"), std::string::npos) << error(deep);
  // Far over it: still an error with the position, no stack overflow.
  std::string deeper = "nodes: " + std::string(3000, '[') + std::string(3000, ']') + "\n";
  EXPECT_NE(error(deeper).find("d.yaml:1:"), std::string::npos) << error(deeper);
  // A chain of anchors, each holding the previous one: few values and shallow as written,
  // but 1500 deep once expanded. Key a_i expands to i values, so the copy meets the
  // expansion bound (2 per byte + 65536) before the nesting bound (1000): a chain of
  // aliases 1000 deep needs about 500,000 values. Either is a positioned error, never a
  // stack overflow.
  std::string chain = "a0: &a0 [x]\n";
  for (int i = 1; i < 1500; ++i)
    chain += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) + "]\n";
  chain += "nodes: []\n";
  const std::string chain_error = error(chain);
  EXPECT_NE(chain_error.find("d.yaml:"), std::string::npos) << chain_error.substr(0, 300);
  EXPECT_TRUE(chain_error.find("values nested too deeply") != std::string::npos ||
              chain_error.find("expands to more than") != std::string::npos)
      << chain_error.substr(0, 300);
}

// ---- command line ---------------------------------------------------------------------------

TEST_F(HostileIo, VerifyLeavesOutputUntouchedWhenTheRunFails) {
  // An op no kernel set has: the rewrite succeeds, running the graphs does not.
  std::string in = write("g.yaml", "inputs: [x]\noutputs: [y]\nnodes:\n"
                                   "  - {id: x, op_type: Input, types: [{dtype: float32, shape: [2]}]}\n"
                                   "  - {id: y, op_type: NoSuchOp, inputs: [x]}\n");
  std::string out = old_file("o.yaml");
  CliRun r = run_cli("verify --rules " + src("rules/seed.yaml") + " " + in + " -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(slurp(out), "old") << r.out;
}

TEST_F(HostileIo, BadlyTypedTestCaseOptionsArePositionedAndFailOnlyTheirCase) {
  std::string rules = src("rules/seed.yaml");
  std::string t = write("t.yaml", "load: [" + rules + "]\ntests:\n"
                                  "  - name: bad\n    input: \"input x\\ny = ReLU(x)\\noutput y\"\n"
                                  "    max_rounds: many\n    expect: unchanged\n"
                                  "  - name: good\n    input: \"input x\\ny = ReLU(x)\\noutput y\"\n"
                                  "    expect: unchanged\n");
  CliRun r = run_cli("test " + t);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL " + t + ":3 bad"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(t + ":5:17: error: 'max_rounds' must be an integer >= 1, not 'many'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS " + t + ":7 good"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("bad conversion"), std::string::npos) << r.out;
  // `check` refuses the same file, at the same place.
  fails("check " + t, t + ":5:17: error: 'max_rounds' must be an integer >= 1");
  std::string v = write("v.yaml", "load: [" + rules + "]\ntests:\n"
                                  "  - name: bad\n    input: \"input x\\noutput x\"\n"
                                  "    verify: maybe\n    threads: -2\n    expect: unchanged\n");
  fails("test " + v, v + ":5:13: error: 'verify' must be true or false");
  fails("check " + v, v + ":6:14: error: 'threads' must be an integer >= 0, not '-2'");
}

TEST_F(HostileIo, NegativeCountsOnTheCommandLineAreRefused) {
  std::string in = write("g.graph", "input x\ny = ReLU(x)\noutput y\n");
  std::string out = old_file("o.graph");
  std::string rules = src("rules/seed.yaml");
  fails("apply --rules " + rules + " " + in + " -o " + out + " --max-rounds -1", "--max-rounds");
  fails("apply --rules " + rules + " " + in + " -o " + out + " --max-rounds 0", "--max-rounds");
  fails("apply --rules " + rules + " " + in + " -o " + out + " --threads -3", "--threads");
  EXPECT_EQ(slurp(out), "old");
}

TEST(HostileIoValues, ArbitraryBytesInNamesAndStringsRoundTripEveryTextFormat) {
  // Ids, output names and string attributes from ONNX or .gfb may hold any bytes.
  const std::string odd = std::string("a\xff\x01:b`\"\\\n ", 11);
  Graph g;
  NodeId x = g.add_input(odd + "x");
  Attributes a;
  a.set("s", odd);
  a.set("list", std::vector<std::string>{odd, ""});
  NodeId r = g.add_node(odd, OpType::intern("Relu"), {{x, 0}}, a, 2);
  g.output_infos(r)[1].name = odd + "out";
  g.add_output({r, 1});
  g.add_output({r, 0});
  auto same = [](const std::string& what, const std::string& first, const std::string& second) {
    EXPECT_EQ(first, second) << what;
  };
  std::string t = write_graph_text(g);
  same("graph", t, write_graph_text(parse_graph_text(t)));
  std::string y = write_graph_yaml(g);
  same("yaml", y, write_graph_yaml(parse_graph_yaml(y, "g.yaml")));
  std::string j = write_graph_json(g);
  same("json", j, write_graph_json(parse_graph_yaml(j, "g.json")));
  std::string b = write_graph_binary(g);
  same("gfb", b, write_graph_binary(parse_graph_binary(b)));
  EXPECT_EQ(parse_graph_yaml(j, "g.json").node(1).id, odd);
}

TEST(HostileIoValues, InputNodesTakeNoInputs) {
  try {
    parse_graph_text("input y\nx = Input(y)\noutput x\n", "g.graph");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("g.graph:2:1: error: node 'x': an Input node takes no inputs"), std::string::npos)
        << e.what();
  }
}

TEST_F(HostileIo, CheckReportsWhatTestRefusesInATestFile) {
  std::string t = write("t.yaml", "load: [" + src("rules/seed.yaml") + "]\ntests:\n  - input: \"input x\\noutput x\"\n"
                                  "    expect: unchanged\n");
  fails("test " + t, t + ":3:5: error: test case without a name");
  fails("check " + t, t + ":3:5: error: test case without a name");
  // Malformed YAML is still the rule loader's to report.
  std::string m = write("m.yaml", "rules:\n  - name: [a\n");
  fails("check " + m, m + ":3:1: error:");
}

TEST(HostileIoValues, FloatEdgeValuesRoundTripEveryTextFormat) {
  // -0, denormals, extremes and infinities in float32/float64/float16/bfloat16 tensors and
  // float attributes: what a .gfb or ONNX file may hold, each text writer must give back.
  Graph g;
  auto add = [&](const std::string& id, DType dt, const std::string& bytes, std::int64_t n) {
    Tensor t;
    t.dtype = dt;
    t.shape = {n};
    t.data = std::make_shared<const std::string>(bytes);
    Attributes a;
    a.set("value", t);
    a.set("f", -0.0f);
    a.set("fs", std::vector<float>{1e-45f, 3.4028235e38f, -1.17549435e-38f});
    g.add_node(id, OpType::intern("Const"), {}, a);
  };
  auto pack = [](auto... v) {
    std::string s;
    ((s.append(reinterpret_cast<const char*>(&v), sizeof v)), ...);
    return s;
  };
  add("f32", DType::Float32, pack(-0.0f, 1e-45f, 3.4028235e38f, -INFINITY, 0.1f), 5);
  add("f64", DType::Float64, pack(-0.0, 5e-324, 1.7976931348623157e308, 0.1), 4);
  add("f16", DType::Float16, pack(std::uint16_t{0x8000}, std::uint16_t{0x0001}, std::uint16_t{0x7bff}, std::uint16_t{0xfc00}), 4);
  add("bf16", DType::BFloat16, pack(std::uint16_t{0x8000}, std::uint16_t{0x0001}, std::uint16_t{0x7f7f}, std::uint16_t{0x3dcd}), 4);
  std::string b = write_graph_binary(g);
  std::string t = write_graph_text(g);
  EXPECT_EQ(b, write_graph_binary(parse_graph_text(t))) << t;
  std::string y = write_graph_yaml(g);
  EXPECT_EQ(b, write_graph_binary(parse_graph_yaml(y, "g.yaml"))) << y;
  std::string j = write_graph_json(g);
  EXPECT_EQ(b, write_graph_binary(parse_graph_yaml(j, "g.json"))) << j;
}

TEST_F(HostileIo, ConvWeightRankAndInitializerDataAreCheckedBeforeInference) {
  // fuzz/crashes/onnx/crash-libonnx-convpool-shape-inference.onnx: a Conv weight of rank 46
  // (dims packed and unpacked mixed) made libonnx's Conv inference read past its arrays.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  x->set_name("x");
  set_tensor_type(*x, 1, {1, 3, 8, 8});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(1);
  for (int i = 0; i < 6; ++i) w->add_dims(i < 2 ? 3 : 0);  // rank 6, no elements
  auto* c = g->add_node();
  c->set_name("conv");
  c->set_op_type("Conv");
  c->add_input("x");
  c->add_input("w");
  c->add_output("y");
  g->add_output()->set_name("y");
  write_model("conv.onnx", m);
  fails("info " + path("conv.onnx"), path("conv.onnx") + ": error: node 'conv' (Conv): weight 'w' has rank 6, input 'x' rank 4");
  // A weight of the right rank whose data does not fill its shape.
  w->clear_dims();
  for (auto d : {2, 3, 1, 1}) w->add_dims(d);
  w->add_float_data(1.f);
  write_model("short.onnx", m);
  fails("info " + path("short.onnx"), "initializer 'w': its data holds 1 elements, its shape (rank 4) 6");
  for (int i = 0; i < 5; ++i) w->add_float_data(0.f);
  write_model("ok.onnx", m);
  CliRun ok = run_cli("info " + path("ok.onnx"));
  EXPECT_EQ(ok.code, 0) << ok.out;
}
