// cut_json_nodes: where the nodes array may be cut; see json_node_chunks.h for why a cut
// found by its bytes is safe to try.
#include "json_node_chunks.h"

#include <cstring>

namespace graphfuse::textio {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_blanks(std::string_view t, std::size_t at) {
  while (at < t.size() && blank(t[at])) ++at;
  return at;
}

/// Offset of the `[` after the first `"nodes"` that a `:` and a `[` follow, or npos.
std::size_t nodes_array(std::string_view t) {
  constexpr std::string_view kKey = "\"nodes\"";
  for (std::size_t at = t.find(kKey); at != std::string_view::npos; at = t.find(kKey, at + 1)) {
    std::size_t colon = skip_blanks(t, at + kKey.size());
    if (colon >= t.size() || t[colon] != ':') continue;
    std::size_t open = skip_blanks(t, colon + 1);
    if (open < t.size() && t[open] == '[') return open;
  }
  return std::string_view::npos;
}

/// Whether an element starts at `open` the way graphfuse writes nodes: `{` and the key
/// `"id"` first. A `}, {` inside a node (a list of types or tensors, a string) is
/// followed by another key, or by none, nearly always.
bool node_starts(std::string_view t, std::size_t open) {
  constexpr std::string_view kId = "\"id\"";
  std::size_t key = skip_blanks(t, open + 1);
  if (t.compare(key, kId.size(), kId) != 0) return false;
  std::size_t colon = skip_blanks(t, key + kId.size());
  return colon < t.size() && t[colon] == ':';
}

/// The first `}` at or after `from` followed by `,` and a node_starts() element: the
/// `}`'s offset and the `{`'s, or npos.
std::pair<std::size_t, std::size_t> next_cut(std::string_view t, std::size_t from) {
  const char* base = t.data();
  while (from < t.size()) {
    const void* hit = std::memchr(base + from, '}', t.size() - from);
    if (!hit) break;
    std::size_t close = static_cast<std::size_t>(static_cast<const char*>(hit) - base);
    std::size_t comma = skip_blanks(t, close + 1);
    if (comma < t.size() && t[comma] == ',') {
      std::size_t open = skip_blanks(t, comma + 1);
      if (open < t.size() && t[open] == '{' && node_starts(t, open)) return {close, open};
    }
    from = close + 1;
  }
  return {std::string_view::npos, std::string_view::npos};
}

}  // namespace

std::optional<JsonNodeChunks> cut_json_nodes(std::string_view text, std::size_t chunk_bytes,
                                            std::size_t max_piece_bytes) {
  if (chunk_bytes == 0) return std::nullopt;
  std::size_t open = nodes_array(text);
  if (open == std::string_view::npos) return std::nullopt;
  JsonNodeChunks out;
  out.array_open = open;
  std::size_t at = skip_blanks(text, open + 1);
  if (at >= text.size() || text[at] != '{' || !node_starts(text, at)) return std::nullopt;
  // A piece ends at the first cut past chunk_bytes; what is left when no cut follows (the
  // last nodes and the rest of the root object) is the tail.
  while (text.size() - at > chunk_bytes) {
    auto [close, next] = next_cut(text, at + chunk_bytes);
    if (close == std::string_view::npos) break;
    out.pieces.push_back({at, close + 1});
    // A piece this long holds a node of megabytes (tensor data): each thread would keep a
    // copy of it and simdjson's index and a value tree of it at once, several times the
    // memory of reading the file in one piece.
    if (close + 1 - at > max_piece_bytes) return std::nullopt;
    at = next;
  }
  out.tail = at;
  if (out.pieces.size() < 2) return std::nullopt;
  return out;
}

}  // namespace graphfuse::textio
