// Internal to io: a JSON graph text walked once with simdjson's On-Demand API, each node's
// values handed to the schema reader (graph_schema_read.h) as a small DocTree that is
// cleared for the next node; no whole-file value tree. Scalars are taken as their raw text
// and typed by the YAML rules (yaml_values.h), as the writer's NaN/Infinity need; positions
// are byte offsets, made line:column only for a node's location or an error.
//
// Every step returns false where the walk cannot go on (simdjson refuses the text, or the
// text is not in the shape or schema the reading takes; error() keeps simdjson's code).
// The fast reading (quiet) then leaves the file to the diagnostic one (loud), which says
// what is wrong by throwing the Error the caller gets.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "graph/quick_hash.h"
#include "graph_node_sinks.h"
#include "graph_schema_read.h"
#include "json_syntax.h"

namespace graphfuse::textio {

class JsonScan {
 public:
  /// `text` has SIMDJSON_PADDING readable bytes past its end. `marks`: the text is
  /// MarkedBytes' copy of the file (its positions and bytes are given back as the file's).
  JsonScan(std::string_view text, const MarkedBytes* marks, const YamlSource& src, const Check& check);

  /// simdjson's error where the walk stopped on one (SUCCESS: it stopped on the text's shape
  /// or schema).
  simdjson::error_code error() const { return error_; }

  /// Quiet: the root object with its nodes straight into `builder` through `sink`, one at
  /// a time (or, after the pieces were added, those after the last piece: around_pieces());
  /// then the graph inputs, outputs and properties. Nothing where the walk stops.
  std::optional<Graph> read_in_order(InOrderBuilder& builder, InOrderSink& sink);

  /// Quiet, on any thread: the nodes of the file's `[begin, end)` (from a `{` to a `}`:
  /// elements of the nodes array, by json_node_chunks.h's cut) read as an array of their
  /// own into `batch` (names not resolved). False where the piece does not parse whole as
  /// nodes.
  /// `buffer` holds the piece's text, which the batch's names may view, until it is added.
  bool read_piece(std::string_view file_text, std::size_t begin, std::size_t end, std::string& buffer,
                  NodeBatch& batch);

  /// After the pieces: the text read becomes the file up to the nodes array's `[` (at
  /// `array_open`) and from `tail` on, and the root's `nodes` must open at array_open.
  void around_pieces(std::string_view file_text, std::size_t array_open, std::size_t tail);
  /// The positions the nodes added by an InOrderSink take (in file order).
  Positions positions() { return Positions{src_.file, &add_cursor_}; }
  void nodes_reserved() { reserved_ = true; }

  /// Loud: the whole text's graph through GraphBuilder, or the Error of its first problem
  /// (in the order of a reading of the whole document before its schema).
  Graph diagnose();

 private:
  void read_from(std::string& buffer, std::initializer_list<std::string_view> parts, std::size_t cut,
                 std::int64_t before, std::int64_t after);
  bool start();
  bool at_end();
  bool stop(simdjson::error_code code = simdjson::SUCCESS) {
    error_ = code;
    return false;
  }
  template <class T>
  bool take(simdjson::simdjson_result<T>&& r, T& out) {
    if (auto err = std::move(r).get(out)) return stop(err);
    return true;
  }
  /// The value in r, where it is (null when r holds an error): a copy of simdjson's small
  /// iterator structs, written just before in pieces and read back whole, stalls on store
  /// forwarding (about 6% of a 10^6-node load went to two such copies per key).
  template <class T>
  T* ok(simdjson::simdjson_result<T>& r) {
    if (auto err = r.error()) {
      stop(err);
      return nullptr;
    }
    return &r.value_unsafe();
  }

  bool walk_root(InOrderBuilder& builder, InOrderSink& sink, TopParts& top);
  /// The elements of `nodes`, each read into a batch of one handed to `add` (after
  /// `reserve` with their count).
  template <class Reserve, class Add>
  bool read_nodes(simdjson::ondemand::value& v, const Reserve& reserve, const Add& add);
  /// One element of `nodes` into `batch`: quiet, its values gathered here (attribute sets
  /// and type lists written alike read once); loud, the whole node copied into a tree
  /// first, so its messages come in the whole-document reading's order.
  bool read_node(simdjson::ondemand::value& v, NodeBatch& batch);
  bool gather(simdjson::ondemand::value& v, NodeParts& p);
  /// The value v as a DocTree node of `tree`, in `out`. `skip_nodes`: a top-level `nodes`
  /// array is a list without its elements (the diagnostic reading reads them one by one).
  bool convert(DocTree& tree, simdjson::ondemand::value& v, int depth, std::uint32_t& out, bool skip_nodes = false);
  /// A scalar or null token (a view into the text read) as a DocTree node of `tree`.
  bool leaf(DocTree& tree, std::string_view tok, std::uint32_t& out);
  std::string_view raw_key(simdjson::ondemand::field& f, simdjson::ondemand::value& v);
  bool string_text(std::string_view raw, DocTree& tree, std::string_view& out);
  std::uint64_t offset(const char* p) const;
  std::string_view short_span(const char* p) const;
  /// What `read` makes of the value at raw text `tok` (a view into the text read), kept by
  /// that text when it is short: the same text always reads the same.
  template <class T, class Read>
  const T* cached(std::unordered_map<std::string_view, T, QuickHash>& cache, T& scratch, std::string_view tok,
                  const Read& read);

  std::string_view text_;  // the text being read: the file's, a piece's or the outer text's
  // Where text_'s offsets are in the file: before cut_ add before_, from it on after_
  // (read_piece(), around_pieces()).
  std::size_t cut_ = 0;
  std::int64_t before_ = 0, after_ = 0;
  const MarkedBytes* marks_;
  const YamlSource& src_;
  Check check_;
  NodeReader reader_;
  simdjson::error_code error_ = simdjson::SUCCESS;
  LineCursor node_cursor_, top_cursor_, add_cursor_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document doc_;
  DocTree node_tree_, top_tree_;
  DocTree scratch_tree_;  // keys of the top-level mapping that needed decoding
  NodeBatch batch_;       // the node being read, when read one at a time
  std::string buffer_;    // a piece's text, or the text around the pieces
  bool reserved_ = false;        // room for the nodes made before the nodes array was met
  bool reading_pieces_ = false;  // a piece walk (read_piece()): batches outlive the caches
  std::optional<std::uint64_t> nodes_at_;  // around_pieces(): where the root's nodes array must open
  static constexpr std::size_t kMaxSpan = 512;
  static constexpr std::size_t kMaxCached = 4096;
  std::unordered_map<std::string_view, Attributes, QuickHash> attr_cache_;
  std::unordered_map<std::string_view, std::vector<ValueType>, QuickHash> type_cache_;
  Attributes scratch_attrs_;
  std::vector<ValueType> scratch_types_;
};

}  // namespace graphfuse::textio
