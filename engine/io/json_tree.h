// Internal to io: a small position-carrying value tree (null, scalar, list, mapping) that both
// graph readers produce - the JSON reader straight from the file bytes, the YAML reader by
// copying yaml-cpp's nodes - so the graph schema and the attribute typing rules (yaml_values.h)
// are written once. It is flat (nodes in fixed chunks, siblings linked by index) because a 10^6
// node graph has ~10^7 values and a node-per-allocation tree costs more than the parse.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace graphfuse::textio {

class DocTree {
 public:
  enum class Kind : std::uint8_t { Null, Scalar, Seq, Map };
  /// How a scalar was written: plain (typed by its text), quoted (always a string), or with
  /// an explicit YAML tag (see tag()).
  enum class Style : std::uint8_t { Plain, Quoted, Tagged };
  static constexpr std::uint32_t kNone = 0xffffffffu;
  /// Indices are 32-bit: the readers stop before a document reaches this many values.
  static constexpr std::uint32_t kMaxValues = 0xfffffff0u;

  struct Node {
    std::string_view text;  ///< a scalar's text (into the source or strings_)
    std::int32_t line = -1, column = -1;  ///< 0-based like yaml-cpp's marks; -1 unknown
    std::uint32_t first = kNone, last = kNone, next = kNone;  ///< children, sibling link
    std::uint32_t count = 0;  ///< children (a mapping has key, value, key, value, ...)
    Kind kind = Kind::Null;
    Style style = Style::Plain;
  };

  /// Appends a node with no parent; returns its index.
  std::uint32_t add(Kind kind, std::int32_t line, std::int32_t column) {
    if ((size_ & (kChunk - 1)) == 0) {
      chunks_.emplace_back();
      if (size_ != 0) chunks_.back().reserve(kChunk);  // later chunks: full size, never regrown
    }
    Node& n = chunks_.back().emplace_back();
    n.kind = kind;
    n.line = line;
    n.column = column;
    return size_++;
  }
  std::uint32_t size() const { return size_; }
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
  int line() const { return tree_ ? n().line : -1; }
  int column() const { return tree_ ? n().column : -1; }
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
