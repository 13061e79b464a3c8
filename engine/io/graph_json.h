// Internal to io: the JSON graph reader and writer (graph_json_read.cpp, graph_json_write.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

/// Bytes past a JSON text's end that the reader may read (simdjson's SIMDJSON_PADDING):
/// a caller that has them (read_file reserves them) spares the reader a copy of the file.
inline constexpr std::size_t kJsonPadding = 64;

/// Reads a JSON graph file (the schema of docs/graph-formats.md) with simdjson's On-Demand
/// API, node by node into the graph builder. `readable` is how many bytes from text.data()
/// may be read: with kJsonPadding past the end the text is parsed in place, else copied.
/// Errors as parse_graph_yaml's, at file:line:column.
Graph parse_graph_json(std::string_view text, const std::string& file, std::size_t readable = 0);

/// Files of at least this many bytes are read in pieces of kPieceBytes on every thread of
/// the caller's task arena (when it has more than one); see json_node_chunks.h.
inline constexpr std::size_t kPiecesFrom = std::size_t{4} << 20;
inline constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
/// A file with a node of more than this (tensor data) is read in one piece: each thread
/// would hold a copy of such a node, simdjson's index of it and a value tree of it at once
/// (a 158 MB ResNet-18 export with its weights peaked at 754 MB read in pieces, 503 MB in
/// one).
inline constexpr std::size_t kMaxPieceBytes = std::size_t{8} << 20;

struct JsonReadOptions {
  /// Read the nodes in pieces of about this many bytes whatever the file's size and the
  /// thread count (0: the rule above). For tests.
  std::size_t piece_bytes = 0;
  /// Set to the number of pieces when the file was read in pieces (untouched otherwise).
  std::size_t* pieces_read = nullptr;
};
Graph parse_graph_json(std::string_view text, const std::string& file, std::size_t readable,
                       const JsonReadOptions& options);

/// write_graph_json's text in pieces to be written one after the other (joining them would
/// copy the whole text once more).
std::vector<std::string> write_graph_json_pieces(const Graph& g);

}  // namespace graphfuse::textio
