// Internal to io: a small position-carrying value tree (null, scalar, list, mapping) that the
// graph schema reader (graph_doc_read.h) and the attribute typing rules (yaml_values.h) work
// on, so both are written once for YAML and JSON. The YAML reader copies a whole yaml-cpp
// document into one; the JSON reader (graph_json_read.cpp) fills one per graph node from
// simdjson and clears it for the next. It is flat (nodes in fixed chunks, siblings linked by
// index) because a document has ~10 values per graph node and a node-per-allocation tree
// costs more than the parse.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace graphfuse::textio {

/// Line and column (0-based, in bytes) of byte offsets into one text. Asked in increasing
/// order (a JSON reader's values) each answer costs only the bytes since the last one, so
/// positions need no per-value line bookkeeping while parsing.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text = {}) : text_(text) {}

  std::pair<int, int> at(std::size_t offset) {
    if (offset > text_.size()) offset = text_.size();
    const char* t = text_.data();
    if (offset >= off_) {
      for (const char* p = t + off_; (p = static_cast<const char*>(std::memchr(p, '\n', t + offset - p)));) {
        ++line_;
        start_ = static_cast<std::size_t>(++p - t);
      }
    } else {
      for (const char* p = t + offset; (p = static_cast<const char*>(std::memchr(p, '\n', t + off_ - p))); ++p)
        --line_;
      if (start_ > offset) {  // went back past a line start: find this line's start
        start_ = offset;
        while (start_ > 0 && t[start_ - 1] != '\n') --start_;
      }
    }
    off_ = offset;
    return {clamp(line_), clamp(offset - start_)};
  }

 private:
  static int clamp(std::size_t v) { return v > 0x7fffffffu ? 0x7fffffff : static_cast<int>(v); }
  std::string_view text_;
  std::size_t off_ = 0, line_ = 0, start_ = 0;
};

class DocTree {
 public:
  enum class Kind : std::uint8_t { Null, Scalar, Seq, Map };
  /// How a scalar was written: plain (typed by its text), quoted (always a string), or with
  /// an explicit YAML tag (see tag()).
  enum class Style : std::uint8_t { Plain, Quoted, Tagged };
  static constexpr std::uint32_t kNone = 0xffffffffu;
  /// Indices are 32-bit: the readers stop before a document reaches this many values.
  static constexpr std::uint32_t kMaxValues = 0xfffffff0u;
  /// A node's position: line and column (yaml-cpp's marks) or, once offsets() is set, a
  /// byte offset into the text whose lines that cursor counts.
  static constexpr std::uint64_t kNoPos = ~std::uint64_t{0};
  static constexpr std::uint64_t at_line(std::int32_t line, std::int32_t column) {
    return line < 0 ? kNoPos : std::uint64_t(std::uint32_t(line)) << 32 | std::uint32_t(column < 0 ? 0 : column);
  }

  struct Node {
    std::string_view text;  ///< a scalar's text (into the source or strings_)
    std::uint64_t pos = kNoPos;
    std::uint32_t first = kNone, last = kNone, next = kNone;  ///< children, sibling link
    std::uint32_t count = 0;  ///< children (a mapping has key, value, key, value, ...)
    Kind kind = Kind::Null;
    Style style = Style::Plain;
  };

  /// Positions are byte offsets whose line and column `cursor` computes (when a message
  /// or a node's location asks); it must outlive the tree.
  void offsets(LineCursor* cursor) { cursor_ = cursor; }

  /// Appends a node with no parent; returns its index.
  std::uint32_t add(Kind kind, std::uint64_t pos) {
    if ((size_ & (kChunk - 1)) == 0 && (size_ >> kChunkBits) == chunks_.size()) {
      chunks_.emplace_back();
      if (size_ != 0) chunks_.back().reserve(kChunk);  // later chunks: full size, never regrown
    }
    Node& n = chunks_[size_ >> kChunkBits].emplace_back();
    n.kind = kind;
    n.pos = pos;
    return size_++;
  }
  std::uint32_t size() const { return size_; }
  /// Empties the tree, keeping its memory for the next document (the JSON reader's per-node use).
  void clear() {
    for (auto& c : chunks_) c.clear();
    size_ = 0;
    strings_.clear();
    tags_.clear();
  }
  /// Links `child` as the last child of `parent`.
  void append(std::uint32_t parent, std::uint32_t child) {
    Node& p = node(parent);
    if (p.last == kNone) p.first = child;
    else node(p.last).next = child;
    p.last = child;
    ++p.count;
  }
  /// A scalar's text must outlive the tree: a view into the source, or kept here.
  std::string_view keep(std::string s) { return strings_.emplace_back(std::move(s)); }
  void set_tag(std::uint32_t node, std::string tag) {
    this->node(node).style = Style::Tagged;
    tags_[node] = std::move(tag);
  }
  const std::string& tag(std::uint32_t node) const { return tags_.at(node); }

  /// 0-based line and column of node i; {-1, -1} when unknown.
  std::pair<int, int> line_column(std::uint32_t i) const {
    std::uint64_t pos = node(i).pos;
    if (pos == kNoPos) return {-1, -1};
    if (cursor_) return cursor_->at(pos);
    return {static_cast<int>(pos >> 32), static_cast<int>(pos & 0xffffffffu)};
  }

  Node& node(std::uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const Node& node(std::uint32_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }

 private:
  // Nodes live in chunks of 64K: a single vector regrowing to 10^7 nodes copied (and
  // page-faulted) hundreds of MB. The first chunk grows as needed (a small document must not
  // pay for 3 MB of nodes: that was ~4 ms per rule-test graph or fuzz input); the others are
  // reserved whole and never move. Callers hold indices, not references, while adding.
  static constexpr std::uint32_t kChunkBits = 16, kChunk = 1u << kChunkBits;
  std::vector<std::vector<Node>> chunks_;
  std::uint32_t size_ = 0;
  std::deque<std::string> strings_;  // deque: views into the strings stay valid
  std::unordered_map<std::uint32_t, std::string> tags_;
  LineCursor* cursor_ = nullptr;
};

/// A handle on one node of a DocTree (cheap to copy). A default DocRef is a null value.
class DocRef {
 public:
  DocRef() = default;
  DocRef(const DocTree* tree, std::uint32_t index) : tree_(tree), index_(index) {}

  bool is_null() const { return !tree_ || n().kind == DocTree::Kind::Null; }
  bool is_scalar() const { return tree_ && n().kind == DocTree::Kind::Scalar; }
  bool is_seq() const { return tree_ && n().kind == DocTree::Kind::Seq; }
  bool is_map() const { return tree_ && n().kind == DocTree::Kind::Map; }
  std::string_view scalar() const { return tree_ ? n().text : std::string_view(); }
  DocTree::Style style() const { return tree_ ? n().style : DocTree::Style::Plain; }
  const std::string& tag() const { return tree_->tag(index_); }
  /// 0-based line and column; {-1, -1} when unknown.
  std::pair<int, int> line_column() const { return tree_ ? tree_->line_column(index_) : std::pair{-1, -1}; }
  /// The node's position as the tree keeps it (DocTree::Node::pos); kNoPos when unknown.
  std::uint64_t position() const { return tree_ ? n().pos : DocTree::kNoPos; }
  /// Children of a list; key, value, key, value, ... of a mapping.
  std::size_t size() const { return tree_ ? n().count : 0; }

  class iterator {
   public:
    iterator(const DocTree* t, std::uint32_t i) : tree_(t), i_(i) {}
    DocRef operator*() const { return DocRef(tree_, i_); }
    iterator& operator++() {
      i_ = tree_->node(i_).next;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const DocTree* tree_;
    std::uint32_t i_;
  };
  iterator begin() const { return iterator(tree_, tree_ ? n().first : DocTree::kNone); }
  iterator end() const { return iterator(tree_, DocTree::kNone); }

 private:
  const DocTree::Node& n() const { return tree_->node(index_); }
  const DocTree* tree_ = nullptr;
  std::uint32_t index_ = 0;
};

}  // namespace graphfuse::textio
