// The JSON graph reader: a fast reading, and a diagnostic one where the fast one stops.
//
// The fast reading (quiet: each step returns whether it could go on) walks the file with
// simdjson (json_scan.h) straight into the graph in file order (InOrderSink). A big file's
// nodes array is read in pieces on every thread first (json_node_chunks.h says where it is
// cut and why a cut can be trusted once its piece parses): each thread reads a piece into a
// NodeBatch, one thread adds the batches to the graph in file order, then reads the root
// object around the pieces. Where a piece does not parse alone the file is read in one
// piece.
//
// Where the fast reading stops (simdjson refuses the text, the text is not producers-first,
// or anything the schema or GraphBuilder would refuse), the diagnostic reading (loud) says
// what is wrong, as if the file were parsed whole before its schema was checked: the first
// syntax error wins (json_syntax.h), then the top-level keys, then each node through the
// schema reader into GraphBuilder, whose graph it is where the file is valid but not in
// order. Files simdjson refuses that graphfuse reads (bytes that are not UTF-8, control
// characters in strings) are read through a marked copy (MarkedBytes).
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "graph_doc_read.h"
#include "graph_in_order.h"
#include "graph_json.h"
#include "json_node_chunks.h"
#include "json_scan.h"
#include "json_syntax.h"

namespace graphfuse::textio {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING);

namespace {

/// A text simdjson can parse in place: the caller's bytes when they have the padding, else a copy.
class Padded {
 public:
  Padded(std::string_view text, std::size_t readable) {
    if (readable >= text.size() + simdjson::SIMDJSON_PADDING) {
      view_ = text;
    } else {
      copy_ = simdjson::padded_string(text);
      view_ = std::string_view(copy_.data(), copy_.size());
    }
  }
  std::string_view view() const { return view_; }

 private:
  simdjson::padded_string copy_;
  std::string_view view_;
};

/// A piece of the nodes array on its way from a reading thread to the graph: the piece's
/// text (which the batch's names view) and its nodes.
struct Piece {
  std::size_t index = 0;
  std::string text;
  NodeBatch batch;
};

/// Pieces in flight, which also bounds the threads that read at once (each keeps its own
/// parser, buffers and value tree): adding a piece takes most of the time of reading one,
/// so a few readers keep the adding thread busy on any machine.
constexpr std::size_t kMaxPiecesInFlight = 8;

/// The pieces of `cuts` into `sink`, in order; false when one does not parse alone as
/// nodes (a cut that was not between two nodes, or a problem: the file is then read in one
/// piece, which finds it if there is one).
bool add_pieces(std::string_view text, const JsonNodeChunks& cuts, const YamlSource& src, InOrderBuilder& builder,
                InOrderSink& sink) {
  // One scan per thread: each has its own simdjson parser, sized for a piece, so its index
  // is faulted in once, not once per 4 KB of a whole-file index.
  tbb::enumerable_thread_specific<std::unique_ptr<JsonScan>> scans(
      [&] { return std::make_unique<JsonScan>(text, nullptr, src, Check::quiet(src)); });
  // Pieces come back to `spare` once added, so their buffers are reused.
  std::vector<std::unique_ptr<Piece>> all;
  std::vector<Piece*> spare;
  std::mutex spare_lock;
  std::size_t next = 0;
  std::atomic<bool> failed{false};
  auto take_piece = [&](tbb::flow_control& fc) -> Piece* {
    if (next == cuts.pieces.size() || failed.load(std::memory_order_relaxed)) {
      fc.stop();
      return nullptr;
    }
    std::lock_guard<std::mutex> hold(spare_lock);
    Piece* p = nullptr;
    if (!spare.empty()) {
      p = spare.back();
      spare.pop_back();
    } else {
      p = all.emplace_back(std::make_unique<Piece>()).get();
    }
    p->index = next++;
    return p;
  };
  auto read = [&](Piece* p) {
    if (failed.load(std::memory_order_relaxed)) return p;
    const JsonNodeChunks::Piece& cut = cuts.pieces[p->index];
    if (!scans.local()->read_piece(text, cut.begin, cut.end, p->text, p->batch))
      failed.store(true, std::memory_order_relaxed);
    return p;
  };
  auto add = [&](Piece* p) {
    if (!failed.load(std::memory_order_relaxed)) {
      if (p->index == 0) {
        // Room for the nodes, before the first is added: as many as the first piece's share
        // of the array's bytes promises, a little more (the graph grows past it if need be).
        const JsonNodeChunks::Piece& first = cuts.pieces.front();
        const double per_byte = static_cast<double>(p->batch.nodes.size()) / static_cast<double>(first.end - first.begin);
        builder.reserve(static_cast<std::size_t>(per_byte * static_cast<double>(text.size() - first.begin) * 1.02) + 64);
      }
      if (!sink.add(p->batch)) failed.store(true, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> hold(spare_lock);
    spare.push_back(p);
  };
  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  tbb::parallel_pipeline(std::min<std::size_t>(2 * threads, kMaxPiecesInFlight),
                         tbb::make_filter<void, Piece*>(tbb::filter_mode::serial_in_order, take_piece) &
                             tbb::make_filter<Piece*, Piece*>(tbb::filter_mode::parallel, read) &
                             tbb::make_filter<Piece*, void>(tbb::filter_mode::serial_in_order, add));
  return !failed.load();
}

/// The fast reading: the graph, or nothing where it stops.
std::optional<Graph> read_fast(std::string_view text, const YamlSource& src, const JsonReadOptions& options) {
  std::size_t piece_bytes = options.piece_bytes;
  if (piece_bytes == 0 && text.size() >= kPiecesFrom && tbb::this_task_arena::max_concurrency() > 1)
    piece_bytes = kPieceBytes;
  const std::size_t max_piece = std::max(kMaxPieceBytes, 8 * piece_bytes);
  if (auto cuts = piece_bytes ? cut_json_nodes(text, piece_bytes, max_piece) : std::nullopt) {
    InOrderBuilder builder(src.file);
    JsonScan outer(text, nullptr, src, Check::quiet(src));
    InOrderSink sink(builder, outer.positions());
    if (add_pieces(text, *cuts, src, builder, sink)) {
      outer.nodes_reserved();
      outer.around_pieces(text, cuts->array_open, cuts->tail);
      if (std::optional<Graph> g = outer.read_in_order(builder, sink)) {
        if (options.pieces_read) *options.pieces_read = cuts->pieces.size();
        return g;
      }
    }
  }
  InOrderBuilder builder(src.file);
  JsonScan scan(text, nullptr, src, Check::quiet(src));
  InOrderSink sink(builder, scan.positions());
  return scan.read_in_order(builder, sink);
}

/// The diagnostic reading: the graph through GraphBuilder, or the Error of the file's first
/// problem.
Graph read_diagnosing(std::string_view text, const YamlSource& src, const Padded& in) {
  check_json_syntax(text, src);
  MarkedBytes marks;
  if (marks.mark(text)) {
    Padded marked(marks.text(), 0);
    return JsonScan(marked.view(), &marks, src, Check::loud(src)).diagnose();
  }
  return JsonScan(in.view(), nullptr, src, Check::loud(src)).diagnose();
}

}  // namespace

Graph parse_graph_json(std::string_view text, const std::string& file, std::size_t readable) {
  return parse_graph_json(text, file, readable, JsonReadOptions{});
}

Graph parse_graph_json(std::string_view text, const std::string& file, std::size_t readable,
                       const JsonReadOptions& options) {
  YamlSource src{file, text};
  if (text.size() > simdjson::SIMDJSON_MAXSIZE_BYTES)
    src.fail(SourceLoc{file}, "the file is " + std::to_string(text.size()) +
                                  " bytes; JSON graph files are read with simdjson, which takes at most 4 GiB "
                                  "(save big graphs as .gfb; see docs/limits.md)");
  Padded in(text, readable);
  if (std::optional<Graph> g = read_fast(in.view(), src, options)) return std::move(*g);
  return with_source_line(src, [&] { return read_diagnosing(text, src, in); });
}

}  // namespace graphfuse::textio
