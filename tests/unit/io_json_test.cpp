// The JSON graph reader (engine/io/graph_json_read.cpp, on simdjson): a .json file goes
// through it, any other name through yaml-cpp. JSON is YAML, so the same text read both ways
// must give the same graph and the same errors at the same file:line:column; plus the JSON
// syntax errors (engine/io/json_syntax.cpp), the bytes simdjson refuses, and the writer's
// golden output.
#include "test_paths.h"
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "graphfuse/io.h"
#include "json_golden.h"

using namespace graphfuse;

namespace {

std::string error_of(const std::string& text, const std::string& file) {
  try {
    parse_graph_yaml(text, file);
  } catch (const Error& e) {
    return e.loc().str() + ": " + e.message() + " | " + e.source_line();
  }
  return "no error";
}

/// The error through our JSON parser, checked equal to yaml-cpp's for the same text.
std::string both_error(const std::string& text) {
  std::string json = error_of(text, "g.json");
  std::string yaml = error_of(text, "g.yaml");
  EXPECT_EQ(json.substr(6), yaml.substr(6)) << text;  // past "g.json" / "g.yaml"
  return json;
}

}  // namespace

TEST(IoJson, SameGraphAsYamlCpp) {
  // Escapes, unicode, numbers of every spelling the typing rules know, nulls, nesting.
  const char* text = R"({
  "properties": {"p": "a\"b\\c\/d\n\t\u00e9", "q": [1, 2.5, -3e2], "r": true},
  "nodes": [
    {"id": "x", "op_type": "Input", "types": [{"dtype": "float32", "shape": [1, "N", -1]}]},
    {"id": "c", "op_type": "Const", "attributes": {"value": {"tensor": "float32", "shape": [2],
      "data": [NaN, -Infinity]}, "i": -7, "f": 1e-3, "s": "12", "b": false, "e": [],
      "t": [{"tensor": "int64", "shape": [], "data": [3]}], "o": {"opaque": "k", "bytes": "AAE="}}},
    {"id": "y", "op_type": "Add", "inputs": ["x", null, "c"], "outputs": ["y", "y:1"]}
  ],
  "outputs": ["y:1"]
})";
  Graph a = parse_graph_yaml(text, "g.json");
  Graph b = parse_graph_yaml(text, "g.yaml");
  EXPECT_EQ(write_graph_json(a), write_graph_json(b));
  EXPECT_EQ(*a.properties().get_if<std::string>("p"), "a\"b\\c/d\n\t\xc3\xa9");
  // A surrogate pair (which yaml-cpp refuses) is one code point.
  Graph s = parse_graph_yaml(R"({"properties": {"p": "\ud83d\ude00"}, "nodes": []})", "s.json");
  EXPECT_EQ(*s.properties().get_if<std::string>("p"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(a.node(*a.find("x")).loc.str(), "g.json:4:5");
  // What the writer writes reads back to the same bytes through the JSON parser.
  std::string j = write_graph_json(a);
  EXPECT_EQ(write_graph_json(parse_graph_yaml(j, "h.json")), j);
}

TEST(IoJson, SchemaErrorsMatchYamlCpp) {
  EXPECT_EQ(both_error(R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["q"]}]})"),
            "g.json:1:87: node 'b': input 0 refers to 'q', which is no node id or output name | "
            R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["q"]}]})");
  EXPECT_EQ(both_error("[1, 2]"),
            "g.json:1:1: expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`) | [1, 2]");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\",\n \"zzz\": 1}]}"),
            "g.json:2:2: node: unknown key 'zzz' (expected id, op_type, inputs, outputs, attributes, types) |  \"zzz\": 1}]}");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"a\", \"id\": \"b\"}]}").substr(0, 42), "g.json:1:24: node: duplicate key 'id' | {\"");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"\", \"op_type\": \"Input\"}]}").substr(0, 43),
            "g.json:1:19: node id must be a non-empty na");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"C\", \"attributes\": {\"k\": [[1]]}}]}").substr(0, 77),
            "g.json:1:61: node 'a': attribute 'k': lists of lists are not attribute values");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"C\", \"attributes\": {\"k\": 99999999999999999999}}]}")
                .substr(0, 72),
            "g.json:1:60: node 'a': attribute 'k': integer 99999999999999999999 out o");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"C\", \"attributes\": {\"k\": null}}]}").substr(0, 49),
            "g.json:1:60: node 'a': attribute 'k' has no value");
  EXPECT_EQ(both_error("{\"nodes\": 3}").substr(0, 44), "g.json:1:11: `nodes` must be a list of nodes");
  EXPECT_EQ(both_error("{\"nodes\": []}\n"), "no error");
}

namespace {

/// The same text read through the JSON reader's in-order build (or, where that gives up,
/// GraphBuilder) and through yaml-cpp and GraphBuilder: the same graph, ids, inputs,
/// outputs and node positions.
void expect_same_as_builder(const std::string& text) {
  SCOPED_TRACE(text);
  Graph a = parse_graph_yaml(text, "g.json");
  Graph b = parse_graph_yaml(text, "g.yaml");
  EXPECT_EQ(write_graph_json(a), write_graph_json(b));
  ASSERT_EQ(a.capacity(), b.capacity());
  for (NodeId n = 0; n < a.capacity(); ++n) {
    EXPECT_EQ(a.node(n).id, b.node(n).id);
    EXPECT_EQ(a.node(n).loc.line, b.node(n).loc.line) << a.node(n).id;
    EXPECT_EQ(a.node(n).loc.column, b.node(n).loc.column) << a.node(n).id;
    EXPECT_EQ(a.node(n).loc.file, "g.json");
  }
  EXPECT_EQ(a.inputs(), b.inputs());
  EXPECT_EQ(a.outputs(), b.outputs());
  EXPECT_EQ(a.source_file, "g.json");
}

}  // namespace

TEST(IoJson, InOrderBuildGivesGraphBuildersGraph) {
  // Producers first (the in-order build): null inputs, `id:0`, types, repeated attributes.
  expect_same_as_builder(R"({"inputs": ["x"], "outputs": ["r2", "x:0"], "nodes": [
    {"id": "x", "op_type": "Input", "types": [{"dtype": "float32", "shape": [1, 4]}]},
    {"id": "w", "op_type": "Const", "attributes": {"shape": [4, 4]}, "types": [{"dtype": "float32"}]},
    {"id": "r1", "op_type": "MatMul", "inputs": ["x:0", "w", null], "attributes": {"shape": [4, 4]}},
    {"id": "r2", "op_type": "Relu", "inputs": ["r1", ""], "attributes": {"shape": [4, 4]}}]})");
  // What it gives up on, read through GraphBuilder: a reference to a later node (reordered),
  // a later node whose very id is `id:0`, named outputs, an input listed that is no node,
  // no `inputs` (the Input nodes are the inputs), an Input node listed twice.
  expect_same_as_builder(R"({"nodes": [{"id": "b", "op_type": "Relu", "inputs": ["a"]}, {"id": "a", "op_type": "Input"}]})");
  expect_same_as_builder(R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["a:0"]},
    {"id": "a:0", "op_type": "Input"}]})");
  expect_same_as_builder(R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "s", "op_type": "Split", "inputs": ["a"],
    "outputs": ["p", "q"]}, {"id": "b", "op_type": "Add", "inputs": ["q", "s:0"]}], "outputs": ["s:1"]})");
  expect_same_as_builder(R"({"inputs": ["a", "z"], "nodes": [{"id": "a", "op_type": "Input"},
    {"id": "b", "op_type": "Relu", "inputs": ["a"]}]})");
  expect_same_as_builder(R"({"nodes": [{"id": "i2", "op_type": "Input"}, {"id": "i1", "op_type": "Input"},
    {"id": "c", "op_type": "Const"}]})");
  EXPECT_EQ(both_error(R"({"inputs": ["a", "a"], "nodes": [{"id": "a", "op_type": "Input"}]})").substr(0, 51),
            "g.json:1:18: graph input 'a' is listed twice | {\"in");
  // Errors the in-order build leaves to GraphBuilder, at the same positions as ever.
  EXPECT_EQ(error_of("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\"},\n{\"id\": \"a\", \"op_type\": \"Input\"}]}",
                     "g.json")
                .substr(0, 60),
            "g.json:2:1: duplicate node id 'a' (first defined at g.json:1");
  EXPECT_EQ(both_error(R"({"nodes": [{"id": "a", "op_type": "C", "attributes": {"": 1}}]})").substr(0, 53),
            "g.json:1:12: node 'a': has an attribute with an empty");
  EXPECT_EQ(both_error(R"({"nodes": [{"id": "a", "op_type": "Input", "inputs": [null]}]})").substr(0, 51),
            "g.json:1:12: node 'a': an Input node takes no input");
  // Attribute sets written alike are read once and shared, even those too big to intern.
  std::string big = "{";
  for (int k = 0; k < 20; ++k) big += std::string(k ? ", " : "") + "\"k" + std::to_string(k) + "\": " + std::to_string(k);
  big += "}";
  Graph g = parse_graph_yaml(R"({"nodes": [{"id": "a", "op_type": "C", "attributes": )" + big +
                                 R"(}, {"id": "b", "op_type": "C", "attributes": )" + big + "}]}",
                             "g.json");
  EXPECT_TRUE(g.node(*g.find("a")).attrs.shares_with(g.node(*g.find("b")).attrs));
  EXPECT_EQ(*g.node(*g.find("b")).attrs.get_if<std::int64_t>("k19"), 19);
}

TEST(IoJson, InOrderBuildTakesNamedOutputs) {
  // As ONNX imports write them: every value named, references by output name, `id:k`
  // beside names, a name equal to the default one, types for each output.
  std::string big = "{";
  for (int k = 0; k < 20; ++k) big += std::string(k ? ", " : "") + "\"k" + std::to_string(k) + "\": " + std::to_string(k);
  big += "}";
  std::string named = R"({"inputs": ["x"], "outputs": ["/r/out", "s:1", "q"], "nodes": [
    {"id": "x", "op_type": "Input", "outputs": ["x"], "types": [{"dtype": "float32", "shape": [2, 4]}]},
    {"id": "/w", "op_type": "Const", "outputs": ["w:0"], "attributes": )" + big + R"(},
    {"id": "s", "op_type": "Split", "inputs": ["x"], "outputs": ["p", "q"],
     "types": [{"dtype": "float32"}, {"dtype": "float32", "shape": [1, 4]}]},
    {"id": "/c", "op_type": "MatMul", "inputs": ["p", "w:0", "s:1"], "outputs": ["/c/out"], "attributes": )" + big + R"(},
    {"id": "/r", "op_type": "Relu", "inputs": ["/c/out", null], "outputs": ["/r/out"]}]})";
  expect_same_as_builder(named);
  // The in-order build ran: the big attribute sets are shared (GraphBuilder reads each).
  Graph g = parse_graph_yaml(named, "g.json");
  EXPECT_TRUE(g.node(*g.find("/w")).attrs.shares_with(g.node(*g.find("/c")).attrs));
  EXPECT_EQ(g.node(*g.find("s")).outputs[1].name, "q");
  EXPECT_EQ(g.node(*g.find("/w")).outputs[0].name, "w:0");
  // A reference to a later output name (read through GraphBuilder, which orders the nodes).
  expect_same_as_builder(R"({"nodes": [{"id": "b", "op_type": "Relu", "inputs": ["a/out"]},
    {"id": "a", "op_type": "Input", "outputs": ["a/out"]}]})");
  // What GraphBuilder refuses comes out as ever: an output name that is a node's id
  // (further on, or its own at output 1), a default name of another node's output, a name
  // taken twice, a `types` list of the wrong length.
  // (error_of: these messages name the file twice, so yaml-cpp's differ.)
  auto err = [](const std::string& t) {
    std::string e = error_of(t, "g.json");
    return e.substr(0, e.find(" | "));
  };
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Input", "outputs": ["b"]}, {"id": "b", "op_type": "Relu", "inputs": ["b"]}]})"),
            "g.json:1:12: node 'a': output name 'b' clashes with the id of node 'b' at g.json:1:63");
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Split", "outputs": ["p", "a"]}]})"),
            "g.json:1:12: node 'a': output name 'a' clashes with the id of node 'a' at g.json:1:12");
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["a"], "outputs": ["a:1"]}]})"),
            "g.json:1:45: node 'b': output name 'a:1' clashes with the default name of output 1 of node 'a'");
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Input", "outputs": ["v"]}, {"id": "b", "op_type": "Relu", "outputs": ["v"]}]})"),
            "g.json:1:63: node 'b': output name 'v' is already an output of node 'a'");
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Split", "outputs": ["p", "q"], "types": [{"dtype": "float32"}]}]})"),
            "g.json:1:76: node 'a': `types` has 1 entries for 2 output(s)");
  EXPECT_EQ(err(R"({"nodes": [{"id": "a", "op_type": "Input", "outputs": []}]})"),
            "g.json:1:55: node 'a': `outputs` must name at least one output");
}

TEST(IoJson, MappedFilesReadUpToTheirLastByte) {
  // load_graph maps a file and lets the reader look 64 bytes past its end: files that end
  // just before, at and after a page boundary read as the same text in a string.
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("graphfuse_mapped_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string head = R"({"nodes": [{"id": "a", "op_type": "Input"}, {"id": "b", "op_type": "Relu", "inputs": ["a"]}]})";
  for (std::size_t size : {std::size_t{4096} - 65, std::size_t{4096} - 64, std::size_t{4096} - 1, std::size_t{4096},
                           std::size_t{4097}, std::size_t{8192} - 10, std::size_t{8192}}) {
    std::string text = head + std::string(size - head.size() - 1, ' ') + "\n";
    ASSERT_EQ(text.size(), size);
    std::string path = (dir / ("g" + std::to_string(size) + ".json")).string();
    std::ofstream(path, std::ios::binary) << text;
    Graph g = load_graph(path);
    EXPECT_EQ(write_graph_json(g), write_graph_json(parse_graph_yaml(text, "g.json"))) << size;
    // A syntax error in the last byte, found there.
    std::string bad = text;
    bad.back() = '}';
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    try {
      load_graph(path);
      ADD_FAILURE() << size;
    } catch (const Error& e) {
      EXPECT_EQ(e.loc().line, 1) << size;
      EXPECT_EQ(e.loc().column, static_cast<int>(size)) << size;
    }
  }
  // What cannot be mapped is read as before: an empty file, a directory, no file.
  std::ofstream((dir / "empty.json").string()) << "";
  std::filesystem::create_directories(dir / "sub.json");
  for (const char* name : {"empty.json", "sub.json", "none.json"}) {
    std::string path = (dir / name).string();
    EXPECT_THROW(load_graph(path), Error) << path;
  }
  std::filesystem::remove_all(dir);
}

TEST(IoJson, SyntaxErrors) {
  auto err = [](const std::string& t) {
    std::string e = error_of(t, "g.json");
    return e.substr(0, e.find(" | "));
  };
  EXPECT_EQ(err(""), "g.json:1:1: expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)");
  EXPECT_EQ(err(" \n "), "g.json:1:1: expected a mapping with a `nodes:` list (and optional `inputs:`, `outputs:`)");
  EXPECT_EQ(err("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\"}]\n"),
            "g.json:2:1: malformed YAML/JSON: end of map flow not found");
  EXPECT_EQ(err("{\"nodes\": [\n"), "g.json:2:1: malformed YAML/JSON: end of sequence flow not found");
  EXPECT_EQ(err("{\"nodes\": [] \"x\": 1}"), "g.json:1:14: malformed YAML/JSON: expected ',' or '}' after a mapping entry");
  EXPECT_EQ(err("{\"nodes\": [1 2]}"), "g.json:1:14: malformed YAML/JSON: expected ',' or ']' after a list element");
  EXPECT_EQ(err("{\"nodes\": [1,]}"), "g.json:1:14: malformed YAML/JSON: expected a value after ','");
  EXPECT_EQ(err("{\"nodes\": [,]}"), "g.json:1:12: malformed YAML/JSON: expected a value");
  EXPECT_EQ(err("{nodes: []}"), "g.json:1:2: malformed YAML/JSON: expected a quoted key");
  EXPECT_EQ(err("{\"nodes\" []}"), "g.json:1:10: malformed YAML/JSON: expected ':' after a key");
  EXPECT_EQ(err("{\"nodes\": []}\n{}"), "g.json:2:1: malformed YAML/JSON: unexpected text after the top-level value");
  EXPECT_EQ(err("{\"nodes\": [\"ab\n\"]}"), "g.json:1:15: malformed YAML/JSON: end of string not found");
  EXPECT_EQ(err("{\"nodes\": [\"a\\qb\"]}"), "g.json:1:15: malformed YAML/JSON: unknown escape character 'q'");
  EXPECT_EQ(err("{\"nodes\": [\"\\u12G4\"]}"), "g.json:1:17: malformed YAML/JSON: a \\u escape needs four hex digits");
  // simdjson reads `6"x"` as one token; graphfuse's JSON has no comma there.
  EXPECT_EQ(err("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"C\", \"attributes\": {\"k\": [6\"x\", 1]}}]}"),
            "g.json:1:62: malformed YAML/JSON: expected ',' or ']' after a list element");
  EXPECT_EQ(err("{\"nodes\": [{\"id\": a\"b\", \"op_type\": \"C\"}]}"),
            "g.json:1:20: malformed YAML/JSON: expected ',' or '}' after a mapping entry");
  EXPECT_EQ(err(std::string(2000, '[')), "g.json:1:1002: malformed YAML/JSON: values nested too deeply");
}

TEST(IoJson, YamlTagsSurviveTheTreeCopy) {
  // yaml-cpp's tags travel into the DocTree: !!str makes a string, quoting too, others fail.
  Graph g = parse_graph_yaml("nodes:\n  - {id: a, op_type: C, attributes: {s: !!str 5, q: '6', i: 7}}\n", "t.yaml");
  const Attributes& a = g.node(*g.find("a")).attrs;
  EXPECT_EQ(*a.get_if<std::string>("s"), "5");
  EXPECT_EQ(*a.get_if<std::string>("q"), "6");
  EXPECT_EQ(*a.get_if<std::int64_t>("i"), 7);
}

TEST(IoJson, ASyntaxErrorAnywhereComesBeforeSchemaErrors) {
  // The reader stops at the first schema error (node 'b' below) but reports what reading the
  // whole file first would: the syntax error further on, or the top-level key after `nodes`.
  auto err = [](const std::string& t) {
    std::string e = error_of(t, "g.json");
    return e.substr(0, e.find(" | "));
  };
  EXPECT_EQ(err("{\"nodes\": [{\"id\": \"a\", \"op_type\": \"Input\"}, {\"id\": \"b\"},\n {\"id\": \"c\" \"op_type\": \"X\"}]}"),
            "g.json:2:13: malformed YAML/JSON: expected ',' or '}' after a mapping entry");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"b\"}], \"zzz\": 1}"),
            "g.json:1:26: unknown key 'zzz' (expected nodes, inputs, outputs, properties) | {\"nodes\": [{\"id\": \"b\"}], \"zzz\": 1}");
  EXPECT_EQ(both_error("{\"nodes\": [{\"id\": \"b\"}], \"nodes\": []}"),
            "g.json:1:26: graph: duplicate key 'nodes' | {\"nodes\": [{\"id\": \"b\"}], \"nodes\": []}");
  // Within a node: a duplicate key before an unknown one, as the whole-mapping check finds it.
  EXPECT_EQ(both_error("{\"nodes\": [{\"zzz\": 1, \"id\": \"a\", \"id\": \"b\"}]}").substr(0, 37),
            "g.json:1:34: node: duplicate key 'id'");
  // Keys and values with escapes, and numbers as names, read as through yaml-cpp.
  Graph g = parse_graph_yaml("{\"nodes\": [{\"i\\u0064\": 5, \"op_type\": \"In\\u0070ut\"}, {\"id\": \"r\", \"op_type\": \"Relu\", "
                             "\"inputs\": [\"5\"], \"attributes\": {\"k\\n\": \"v\\t\", \"n\": [1, 2.5]}}]}",
                             "e.json");
  EXPECT_EQ(write_graph_json(g), write_graph_json(parse_graph_yaml(write_graph_json(g), "e.yaml")));
  EXPECT_EQ(*g.node(*g.find("r")).attrs.get_if<std::string>("k\n"), "v\t");
}

TEST(IoJson, BytesSimdjsonRefusesStillRead) {
  // simdjson takes only UTF-8 without control characters in strings; graphfuse's JSON holds
  // any bytes (names from ONNX or .gfb) and tabs in strings, as before.
  const std::string odd = std::string("a\xff\xc3(\x80z", 7);
  const std::string marked_range = "\xf4\x8f\xbc\x80";  // U+10FF00, the marks' own range
  std::string text = "{\"nodes\": [{\"id\": \"" + odd + "\", \"op_type\": \"Input\"},\n"
                     "  {\"id\": \"t\\u0041b\tc" + marked_range + "\", \"op_type\": \"R\", \"inputs\": [\"" + odd +
                     "\"], \"attributes\": {\"w\": b" + odd + "}}]}";
  Graph g = parse_graph_yaml(text, "m.json");
  ASSERT_TRUE(g.find(odd));
  NodeId t = *g.find("tAb\tc" + marked_range);
  EXPECT_EQ(*g.node(t).attrs.get_if<std::string>("w"), "b" + odd);
  EXPECT_EQ(g.node(t).loc.str(), "m.json:2:3");
  // Positions after such bytes are the file's.
  std::string bad = text;
  bad.replace(bad.find("\"R\""), 3, "\"R\", \"q\": 1");
  EXPECT_EQ(error_of(bad, "m.json").substr(0, 34), "m.json:2:44: node: unknown key 'q'");
  std::string j = write_graph_json(g);
  EXPECT_EQ(write_graph_json(parse_graph_yaml(j, "w.json")), j);
}

TEST(IoJson, WriterGoldenAndThreadCountIndependent) {
  // The writer's bytes are those it wrote before it was rewritten for speed (one buffer,
  // std::to_chars, chunks in parallel): a small graph with every kind of value, and the
  // fingerprint of a 40,000-node one (several chunks).
  std::ifstream in(GRAPHFUSE_SOURCE_DIR "/tests/unit/data/json_writer_golden.json", std::ios::binary);
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(write_graph_json(golden_graph(23)), golden.str());
  Graph big = golden_graph(40000);
  std::string j = write_graph_json(big);
  EXPECT_EQ(j.size(), 6541159u);
  EXPECT_EQ(fnv1a(j), 7227156937201761652ull);
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    EXPECT_EQ(write_graph_json(big), j);
  }
  EXPECT_EQ(write_graph_json(parse_graph_yaml(j, "big.json")), j);
}

TEST(IoJson, WriterReportsTheFirstBadNodeInOrder) {
  // Chunks are written in parallel; the error is still the first node's in write order.
  Graph g = golden_graph(20000);
  Tensor t;
  t.dtype = DType::UInt64;
  t.shape = {1};
  std::uint64_t big = ~0ull;
  t.data = std::make_shared<const std::string>(reinterpret_cast<const char*>(&big), 8);
  for (const char* id : {"n19000", "n9001"}) {
    Attributes a = g.node(*g.find(id)).attrs;
    a.set("u", t);
    g.set_attrs(*g.find(id), a);
  }
  try {
    write_graph_json(g);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n9001', attribute 'u': uint64 element 0"), std::string::npos) << e.what();
  }
}
