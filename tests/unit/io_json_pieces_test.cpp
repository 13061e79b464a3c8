// The JSON reader's parallel path (engine/io/graph_json_read.cpp, json_node_chunks.h): a
// big file's nodes array is cut by its bytes into pieces read on several threads. Whatever
// the cuts, the graph (node positions included) and every error must be the one-piece
// reading's; cuts that are not between two nodes must be noticed, not trusted.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <string>

#include "graphfuse/generate.h"
#include "graphfuse/io.h"
#include "io/graph_json.h"
#include "io/json_node_chunks.h"

using namespace graphfuse;

namespace {

/// The graph as JSON, then every node's file:line:column; or the error.
std::string outcome(const std::string& text, std::size_t piece_bytes, std::size_t* pieces = nullptr) {
  try {
    textio::JsonReadOptions options;
    options.piece_bytes = piece_bytes;
    options.pieces_read = pieces;
    Graph g = textio::parse_graph_json(text, "g.json", 0, options);
    std::string out = write_graph_json(g);
    for (NodeId n : g.nodes()) out += "\n" + g.node(n).loc.str();
    return out;
  } catch (const Error& e) {
    return "error " + e.loc().str() + ": " + e.message() + " | " + e.source_line();
  }
}

/// A file of `n` nodes in a chain, each with `extra` spliced into its attributes, laid out
/// as graphfuse's writer does (one node per line) or all on one line.
std::string chain(int n, const std::string& extra, bool one_line = false, bool typed = false) {
  std::string nl = one_line ? " " : "\n";
  std::string t = "{\"inputs\": [\"x\"], \"nodes\": [" + nl + "  {\"id\": \"x\", \"op_type\": \"Input\"}";
  for (int i = 0; i < n; ++i) {
    std::string prev = i == 0 ? "x" : "n" + std::to_string(i - 1);
    t += "," + nl + "  {\"id\": \"n" + std::to_string(i) + "\", \"op_type\": \"Relu\", \"inputs\": [\"" + prev +
         "\"], \"attributes\": {\"k\": " + std::to_string(i % 3) + extra + "}" +
         (typed ? ", \"types\": [{\"dtype\": \"float32\", \"shape\": [" + std::to_string(i % 5) + "]}]" : "") + "}";
  }
  t += nl + "], \"outputs\": [\"n" + std::to_string(n - 1) + "\"]," + nl + "\"properties\": {\"p\": \"}, {\"}}";
  return t;
}

}  // namespace

TEST(IoJsonPieces, CutsFallBetweenNodes) {
  std::string text = chain(40, "");
  auto cuts = textio::cut_json_nodes(text, 200);
  ASSERT_TRUE(cuts);
  EXPECT_EQ(text[cuts->array_open], '[');
  ASSERT_GE(cuts->pieces.size(), 5u);
  std::size_t at = text.find('{', cuts->array_open);
  for (const auto& p : cuts->pieces) {
    EXPECT_EQ(p.begin, at);
    EXPECT_EQ(text[p.begin], '{');
    EXPECT_EQ(text[p.end - 1], '}');
    EXPECT_GE(p.end - p.begin, 200u);
    at = text.find('{', p.end);
  }
  EXPECT_EQ(cuts->tail, at);
  // No nodes array, or too short for two pieces: no cuts.
  EXPECT_FALSE(textio::cut_json_nodes(R"({"node": [{"id": "a"}, {"id": "b"}]})", 4));
  EXPECT_FALSE(textio::cut_json_nodes(text, text.size() / 2 + 1));
  EXPECT_FALSE(textio::cut_json_nodes(R"({"nodes": [], "x": [{}, {}, {}]})", 1));
  // Only before an element that starts as graphfuse writes nodes, id first.
  std::string later_id = chain(40, R"(, "l": [{"a": 1}, {"b": 2}])");
  auto some = textio::cut_json_nodes(later_id, 200);
  ASSERT_TRUE(some);
  for (const auto& p : some->pieces) EXPECT_EQ(later_id.compare(p.begin, 7, R"({"id": )"), 0);
  // No cuts where a piece would hold a node longer than the limit (tensor data).
  std::string big = chain(40, ", \"data\": [" + std::string(3000, '1') + "]");
  EXPECT_TRUE(textio::cut_json_nodes(big, 200));
  EXPECT_FALSE(textio::cut_json_nodes(big, 200, 2500));
}

TEST(IoJsonPieces, SameGraphAndPositionsAsOnePiece) {
  // A generated network as graphfuse writes it: every piece size reads the same graph.
  std::string text = write_graph_json(generate_cnn_graph(GenerateOptions{3000, 7, true}));
  std::string one = outcome(text, 0);
  ASSERT_EQ(one.rfind("error", 0), std::string::npos) << one;
  for (std::size_t bytes : {64, 1000, 20000}) {
    std::size_t pieces = 0;
    EXPECT_EQ(outcome(text, bytes, &pieces), one) << bytes;
    EXPECT_GE(pieces, text.size() / bytes / 2) << "the file was not read in pieces";
  }
  // All on one line: columns from a line that spans every piece.
  std::string flat = chain(300, "", true);
  std::size_t pieces = 0;
  EXPECT_EQ(outcome(flat, 100, &pieces), outcome(flat, 0));
  EXPECT_GT(pieces, 10u);
}

TEST(IoJsonPieces, TypesOutliveThePieceThatReadThem) {
  // Pieces wait to be added while their walk reads the next: what they hold of a type list
  // must be theirs.
  std::string text = chain(2000, "", false, true);
  std::size_t pieces = 0;
  EXPECT_EQ(outcome(text, 120, &pieces), outcome(text, 0));
  EXPECT_GT(pieces, 100u);
}

TEST(IoJsonPieces, OnOneThreadToo) {
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  std::string text = chain(500, "");
  std::size_t pieces = 0;
  EXPECT_EQ(outcome(text, 300, &pieces), outcome(text, 0));
  EXPECT_GT(pieces, 10u);
}

TEST(IoJsonPieces, CutLookalikesInsideNodesAreNotTrusted) {
  // `}, {` inside strings and in nested lists of mappings: cut there, a piece does not
  // parse alone, and the file is read in one piece, to the same graph.
  for (std::string extra : {R"(, "s": "a}, {\"b\": 1}, {c")", R"(, "l": [{"a": 1}, {"id": [{"id": 2}, {}]}])",
                            R"(, "e": "}\"}, {", "q": "]")", R"(, "m": [{"k": 1}, {"id": "n3"}])"}) {
    std::string text = chain(120, extra);
    for (std::size_t bytes : {8, 50, 333}) EXPECT_EQ(outcome(text, bytes), outcome(text, 0)) << extra << " " << bytes;
  }
  // Escaped and decoded names in references, and a string holding the nodes key itself.
  std::string text = chain(80, R"(, "z": "\"nodes\": [{")");
  for (int i = 0; i < 80; i += 7) {
    std::string name = "\"n" + std::to_string(i) + "\"]";
    std::size_t at = text.find("[" + name);
    if (at != std::string::npos) text.replace(at + 1, name.size() - 1, "\"\\u006e" + std::to_string(i) + "\"");
  }
  EXPECT_EQ(outcome(text, 64), outcome(text, 0));
}

TEST(IoJsonPieces, APieceIsCheckedNotJustWalked) {
  // Found by the fuzz target: simdjson's On-Demand walk skips what it is not asked to read
  // by counting brackets, so this piece (cut after the node's third `}`) read as one node
  // `c` with op `X`, where the file has a syntax error.
  std::string text = chain(30, "");
  std::string bad = R"({"id": "c", "op_type": "X": {"tensor": "float32", "shape": [] "float32"}}},)";
  text.insert(text.find(R"({"id": "n20")"), bad + "\n  ");
  std::string one = outcome(text, 0);
  EXPECT_NE(one.find("error g.json:"), std::string::npos) << one;
  for (std::size_t bytes : {8, 11, 40, 100}) EXPECT_EQ(outcome(text, bytes), one) << bytes;
}

TEST(IoJsonPieces, ErrorsAreTheOnePieceErrors) {
  std::string good = chain(200, "");
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    std::size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  for (std::string text : {
           broken(R"("id": "n150")", R"("id": "n150" "x")"),                 // syntax, in a late piece
           broken(R"("id": "n150")", R"("id": "n3")"),                         // duplicate id
           broken(R"("inputs": ["n120"])", R"("inputs": ["n190"])"),           // a later node
           broken(R"("inputs": ["n120"])", R"("inputs": ["nope"])"),           // no such node
           broken(R"("op_type": "Relu", "inputs": ["n99"])", R"("op_type": [7], "inputs": ["n99"])"),
           broken(R"("id": "n170")", R"("idx": "n170")"),                      // unknown key
           broken(R"({"id": "n160")", R"(]{"id": "n160")"),                     // the array closed early
           broken("}},\n  {\"id\": \"n60\"", "}},,\n  {\"id\": \"n60\""),
           broken("}},\n  {\"id\": \"n60\"", "}}, ] ,\n  {\"id\": \"n60\""),
           broken(R"(}}
], "outputs")", R"(}},
], "outputs")"),                                                              // a trailing comma
           broken(R"("outputs": ["n199"])", R"("outputs": ["n199"], "nodes": [])"),  // nodes twice
           // A `"nodes": [` inside a value before the root's: the cuts fall in it.
           broken(R"({"inputs")", R"({"properties": {"nodes": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}, "inputs")"),
       }) {
    std::string one = outcome(text, 0);
    EXPECT_EQ(one.rfind("error", 0), 0u) << one;
    for (std::size_t bytes : {16, 200, 1500}) EXPECT_EQ(outcome(text, bytes), one) << text.substr(0, 80);
  }
}
