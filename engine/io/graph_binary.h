// Internal to io: the .gfb binary graph format, shared by its reader and writer.
//
// Why a binary format: yaml-cpp needs ~25 us a node to read the YAML/JSON schema
// (~26 s for a million nodes) and the .graph reader ~7 us; a .gfb file of the same
// graph is about a third of the JSON's size and loads at memory speed. The layout
// (all integers LEB128 varints unless noted, strings as varint length + bytes):
//
//   "GFB1" varint(version = 1)
//   attrset(properties)
//   varint(node count), then per node, producers first (the writers' order):
//     string(id)
//     varint(op)            index into the op table; == table size: a new op, string(name) follows
//     varint(inputs)        then per input: varint(d) (0 = absent, else the producer is d nodes
//                           back in the file) and varint(port) when d > 0
//     attrset(attributes)
//     varint(outputs)       >= 1; then byte 0 (all unnamed and untyped) or 1 and per output:
//                           string(name), valuetype
//   varint(graph inputs) node indices; varint(graph outputs) (node index, port) pairs
//   "GFB!"                  (so a truncated file is an error, not a smaller graph)
//
//   attrset:   varint 0 empty | 1 a new set, numbered in order of appearance | 2 a new set
//              not numbered (large or one-off) | k >= 3: set number k - 3 again;
//              a new set is varint(count) then per entry string(key), value
//   value:     byte(AttrValue index) then int: zigzag varint; float: 4 bytes LE; string;
//              bool: byte; tensor; lists: varint(count) then elements (floats 4 bytes LE,
//              bools one byte each); opaque: string(kind) string(bytes)
//   tensor:    varint(dtype) varint(rank) zigzag dims byte(has data) [string(bytes)]
//   valuetype: varint(dtype) byte(shape known) varint(rank) zigzag dims
//              varint(dim params: 0 or rank) strings
//
// Repeated attribute sets are written once and referenced after, and the reader hands
// every node the same (copy-on-write) Attributes, so a loaded graph shares them too.
// Source positions are not stored: a .gfb file is written by graphfuse, not by hand.
#pragma once

#include <cstdint>
#include <string_view>

namespace graphfuse::binio {

inline constexpr std::string_view kMagic = "GFB1";
inline constexpr std::string_view kEndMagic = "GFB!";
inline constexpr std::uint64_t kVersion = 1;

enum AttrSetMark : std::uint64_t { kEmptySet = 0, kNewSet = 1, kOneOffSet = 2, kFirstSetRef = 3 };

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

}  // namespace graphfuse::binio
