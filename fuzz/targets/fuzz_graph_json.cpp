// libFuzzer target: the .json graph reader (parse_graph_yaml), then the checks of fuzz_common.h
// (validation, and save/load/save byte-identical in every format). Then the same bytes read
// with the nodes array cut into pieces of a few dozen bytes (the reader's parallel path,
// which big files take): the same graph, node positions included, or the same error; and
// whatever is accepted passes the reader's own syntax check.
#include "fuzz_common.h"
#include "io/graph_json.h"
#include "io/json_syntax.h"

namespace {

/// What a reading gave: the graph as JSON with every node's line:column, or the error.
std::string describe(const graphfuse::Graph& g) {
  std::string out = graphfuse::write_graph_json(g);
  for (graphfuse::NodeId n : g.nodes()) out += "\n" + g.node(n).loc.str();
  return out;
}
std::string describe(const graphfuse::Error& e) { return "error " + e.loc().str() + ": " + e.message(); }

/// The reading with the nodes cut every `piece_bytes`, described.
std::string in_pieces(std::string_view text, std::size_t piece_bytes) {
  try {
    return describe(
        graphfuse::textio::parse_graph_json(text, "<fuzz>.json", 0, graphfuse::textio::JsonReadOptions{piece_bytes}));
  } catch (const graphfuse::Error& e) {
    return describe(e);
  } catch (const std::exception& e) {
    return std::string("exception ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::bytes(data, size);
  // The one-piece reading (inputs this small are never cut), described for the comparison
  // below.
  graphfuse::Graph g;
  std::string whole;
  bool read = fuzz::guarded("parse_graph_yaml", [&] {
    try {
      g = graphfuse::parse_graph_yaml(text, "<fuzz>.json");
    } catch (const graphfuse::Error& e) {
      whole = describe(e);
      throw;
    } catch (const std::exception& e) {
      whole = std::string("exception ") + e.what();
      throw;
    }
  });
  if (read) {
    fuzz::check_graph(g);
    whole = describe(g);
    // What the reader accepts is JSON as graphfuse reads it (simdjson's On-Demand walk
    // skips what it is not asked for without checking it).
    try {
      graphfuse::textio::check_json_syntax(text, graphfuse::textio::YamlSource{"<fuzz>.json", text});
    } catch (const graphfuse::Error& e) {
      fuzz::finding("the JSON reader accepted text its syntax check refuses", e.message());
    }
  }
  // Piece sizes from the input's length: small enough that most inputs are cut.
  const std::size_t piece_bytes = 8 + size % 41;
  std::string pieces = in_pieces(text, piece_bytes);
  if (whole != pieces) fuzz::finding("the JSON reader's pieces differ from its one-piece reading", whole + "\n---\n" + pieces);
  return 0;
}
