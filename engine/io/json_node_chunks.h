// Internal to io: where a JSON graph file's `nodes` array can be cut into pieces that are
// read on several threads (graph_json_read.cpp).
//
// The cuts are found by looking at bytes, not by parsing: the first `"nodes"` followed by
// `:` and `[`, then, every `chunk_bytes` or so, a `}` followed by `,` and `{"id":` (blanks
// between allowed; graphfuse's writer puts each node's id first). Such a place need not be
// where the file's structure is (the bytes may be inside a string, or between two objects
// of a nested list). The reader makes them so: each piece, read as the elements of an
// array, must pass the JSON syntax check and parse whole and alone, and the text around the
// array (everything but the pieces) must parse as the root object with `nodes` where the
// cut says. JSON's grammar reads left to right with no look-back, so when every piece and
// that outer text parse, each cut is between two elements of the root's `nodes` array, and
// the pieces together are the file's nodes, in order. When one does not parse the reader
// reads the file in one piece.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace graphfuse::textio {

struct JsonNodeChunks {
  /// Offset of the `[` that opens the nodes array.
  std::size_t array_open = 0;
  /// [begin, end) of each piece: from a `{` to just past a `}`, in file order; the next
  /// piece (or the tail) starts at the `{` after the `,` that follows.
  struct Piece {
    std::size_t begin = 0, end = 0;
  };
  std::vector<Piece> pieces;
  /// Offset of the first element not in a piece (a `{`): from there on the array is read
  /// with the text around it.
  std::size_t tail = 0;
};

/// The cuts of `text` into pieces of about `chunk_bytes` each, or nothing when the text has
/// no `"nodes": [` with a `{"id":` after it, when the array is shorter than two pieces, or
/// when a piece would be longer than `max_piece_bytes` (a node of megabytes: tensor data).
std::optional<JsonNodeChunks> cut_json_nodes(std::string_view text, std::size_t chunk_bytes,
                                            std::size_t max_piece_bytes = std::size_t(-1));

}  // namespace graphfuse::textio
