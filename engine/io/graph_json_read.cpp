// The JSON graph reader: simdjson's On-Demand API walks the file once, and each element of
// `nodes` becomes a small DocTree (cleared for the next) that the schema reader shared with
// YAML (graph_doc_read.h) checks and hands to the graph builder; no whole-file value tree.
// Scalars are taken as their raw text and typed by the YAML rules (yaml_values.h), as the
// writer's NaN/Infinity need; positions are byte offsets, turned into line:column only for
// a node's location or an error.
//
// A big file's nodes array is read in pieces on every thread (json_node_chunks.h says where
// it is cut and why a cut can be trusted once its piece parses): each thread's walk reads a
// piece into a NodeBatch, and one walk adds the batches to the graph in file order, then
// reads the root object around the pieces. Any piece that does not parse, or any error,
// and the file is read again in one piece, below.
//
// Errors come out as if the file were parsed whole before its schema was checked: when the
// walk stops (simdjson refuses the text, or the schema does), the slow path checks the whole
// text's syntax (json_syntax.h: the first syntax error wins, with its message and position)
// and then reads the whole document into one tree, whose schema errors come in the order of
// that whole-document reading. Files simdjson refuses that graphfuse reads (bytes that are
// not UTF-8, control characters in strings) go through a marked copy (MarkedBytes).
#include <simdjson.h>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "graph/graph_tuning.h"
#include "graph_doc_read.h"
#include "graph_in_order.h"
#include "graph_json.h"
#include "json_node_chunks.h"
#include "json_syntax.h"

namespace graphfuse::textio {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING);

namespace {

namespace od = simdjson::ondemand;

/// The walk cannot go on: simdjson's error (or SUCCESS when the text is fine but not in the
/// shape the walk takes, e.g. a root that is no mapping); the slow path says what is wrong.
struct Stop {
  simdjson::error_code code = simdjson::SUCCESS;
};

template <class T>
T take(simdjson::simdjson_result<T>&& r) {
  T out;
  if (auto err = std::move(r).get(out)) throw Stop{err};
  return out;
}

/// The value in r, where it is: a copy of simdjson's small iterator structs, written just
/// before in pieces and read back whole, stalls on store forwarding (about 6% of a
/// 10^6-node load went to two such copies per key).
template <class T>
T& ok(simdjson::simdjson_result<T>& r) {
  if (auto err = r.error()) throw Stop{err};
  return r.value_unsafe();
}

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Whether s holds c. Names and numbers are a few bytes: a loop the compiler keeps inline
/// beats a call to memchr (a few percent of a 10^6-node load); long strings still get it.
bool holds(std::string_view s, char c) {
  if (s.size() > 32) return s.find(c) != std::string_view::npos;
  for (char x : s)
    if (x == c) return true;
  return false;
}

/// s == lit, the length known at compile time so the comparison is a few instructions.
template <std::size_t N>
bool is(std::string_view s, const char (&lit)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

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

/// Nodes read but not yet added to the graph: their references are still names. The texts
/// are views into the text read (the file, or a piece's buffer, which outlives the batch)
/// or into `kept`.
struct NodeBatch {
  struct Node {
    std::string id;
    std::uint32_t id_hash = 0;  // GraphTuning::id_hash(id), computed by the reading thread
    OpType op;
    Attributes attrs;
    std::uint64_t offset = 0;  // of the node's `{` in the file
    std::uint32_t inputs_begin = 0, inputs_end = 0;
    std::uint32_t outputs_begin = 0, outputs_end = 0;
    const std::vector<ValueType>* types = nullptr;  // null: none given
  };
  std::vector<Node> nodes;
  std::vector<std::string_view> inputs;  // empty: no value (null)
  std::vector<std::uint32_t> input_hashes;  // GraphTuning::id_hash of each of inputs
  std::vector<std::string> output_names;
  std::deque<std::string> kept;                     // decoded input names
  std::deque<std::vector<ValueType>> kept_types;    // type lists no cache holds
  void clear() {
    nodes.clear();
    inputs.clear();
    input_hashes.clear();
    output_names.clear();
    kept.clear();
    kept_types.clear();
  }
};

/// A piece of the nodes array on its way from a reading thread to the graph: the piece's
/// text wrapped as an array (with simdjson's padding), and its nodes.
struct Piece {
  std::size_t index = 0;
  std::string text;
  NodeBatch batch;
};

/// One reading of the document, fast (node by node) or whole.
class JsonWalk {
 public:
  /// `text` has SIMDJSON_PADDING readable bytes past its end (Padded's view).
  JsonWalk(std::string_view text, const MarkedBytes* marks, const YamlSource& src)
      : text_(text), marks_(marks), src_(src), node_cursor_(src.text), top_cursor_(src.text),
        doc_reader_(src) {
    // Two cursors, each asked in increasing order: the nodes', and the top-level values'
    // (the writer puts inputs and outputs before the nodes).
    node_tree_.offsets(&node_cursor_);
    top_tree_.offsets(&top_cursor_);
  }

  /// Node by node; throws Stop or Error where the slow path must say what is wrong. With
  /// `in_order`, straight into the graph (InOrderBuilder; also throws GiveUp), else through
  /// GraphBuilder.
  Graph fast(bool in_order) {
    if (in_order) in_order_.emplace(src_.file);
    return walk_root();
  }

  /// The nodes of `piece` (text from a `{` to a `}`: elements of the nodes array, by
  /// json_node_chunks.h's cut), read as an array of its own into piece.batch; the file's
  /// `file_text` holds the piece at `begin`. Called on any thread, one piece at a time per
  /// walk. Throws Stop (or Error) where the piece does not parse whole as nodes.
  void read_piece(std::string_view file_text, JsonNodeChunks::Piece cut, Piece& piece) {
    piece.batch.clear();
    // The '[' is not the file's: the piece's offsets are one less in the file.
    read_from(piece.text, {"[", file_text.substr(cut.begin, cut.end - cut.begin), "]"}, 0, 0,
              static_cast<std::int64_t>(cut.begin) - 1);
    reading_pieces_ = true;
    // simdjson's On-Demand walk does not check what it skips (a value read as a raw token
    // is skipped by counting brackets), so a piece cut inside a node can read as nodes:
    // `{"op_type": "X": {...}}}` reads as a node with an op. Across a whole file the
    // brackets have to come out right at the end; a piece alone must be checked.
    check_json_syntax(text_, YamlSource{src_.file, text_});
    start();
    od::array nodes = take(doc_.get_array());
    for (auto element : nodes) {
      od::value& n = ok(element);
      node_tree_.clear();
      read_node_in_order(n, piece.batch);
    }
    at_end();
  }

  /// The file read in pieces on all threads, nodes into the graph in file order on one
  /// (in_order_), and then the text around the pieces: the root object with its nodes
  /// array holding the nodes after the last piece. Throws as fast(true) does.
  Graph read_with_pieces(std::string_view file_text, const JsonNodeChunks& cuts) {
    in_order_.emplace(src_.file);
    run_pieces(file_text, cuts);
    nodes_at_ = cuts.array_open;
    const std::size_t tail = cuts.tail;
    // The outer text: the file up to the array's '[', then from the tail on; its offsets
    // past the '[' are the tail's.
    const std::size_t head = cuts.array_open + 1;
    std::string outer;
    read_from(outer, {file_text.substr(0, head), file_text.substr(tail)}, head, 0,
              static_cast<std::int64_t>(tail) - static_cast<std::int64_t>(head));
    return walk_root();
  }

 private:
  /// Makes `buffer` the text read: `parts` joined, simdjson's padding after them. Its
  /// offsets before `cut` are `before` away from where they are in the file, the others
  /// `after`. The caches are keyed by views into the text read, and a piece's buffer is
  /// read again for the walk's next piece, so they start empty (a few distinct sets per
  /// piece).
  void read_from(std::string& buffer, std::initializer_list<std::string_view> parts, std::size_t cut,
                 std::int64_t before, std::int64_t after) {
    buffer.clear();
    std::size_t size = 0;
    for (std::string_view part : parts) size += part.size();
    buffer.reserve(size + simdjson::SIMDJSON_PADDING);
    for (std::string_view part : parts) buffer.append(part);
    buffer.append(simdjson::SIMDJSON_PADDING, ' ');
    text_ = std::string_view(buffer.data(), size);
    cut_ = cut;
    before_ = before;
    after_ = after;
    attr_cache_.clear();
    type_cache_.clear();
  }

  /// The pieces into the graph, in order. Throws Stop when a piece does not parse alone
  /// (a cut that was not between two nodes, or an error): the file is then read in one
  /// piece, which says what is wrong if anything is. (Going on from the failed piece with
  /// the rest of the file as the outer text would copy that rest.)
  void run_pieces(std::string_view file_text, const JsonNodeChunks& cuts) {
    // One walk per thread: each has its own simdjson parser, sized for a piece, so its
    // index is faulted in once, not once per 4 KB of a whole-file index.
    tbb::enumerable_thread_specific<std::unique_ptr<JsonWalk>> walks(
        [&] { return std::make_unique<JsonWalk>(text_, nullptr, src_); });
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
      try {
        walks.local()->read_piece(file_text, cuts.pieces[p->index], *p);
        return p;
      } catch (const Stop&) {
      } catch (const Error&) {
      } catch (const GiveUp&) {
      } catch (const SchemaProblem&) {
      }
      failed.store(true, std::memory_order_relaxed);
      return p;
    };
    auto add = [&](Piece* p) {
      if (!failed.load(std::memory_order_relaxed)) {
        if (p->index == 0) reserve_from_first_piece(file_text, cuts, p->batch.nodes.size());
        add_batch(p->batch);
      }
      std::lock_guard<std::mutex> hold(spare_lock);
      spare.push_back(p);
    };
    // Pieces in flight, which also bounds the threads that read at once (each keeps its own
    // parser, buffers and value tree): adding a piece takes most of the time of reading one,
    // so a few readers keep the adding thread busy on any machine.
    const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    tbb::parallel_pipeline(std::min<std::size_t>(2 * threads, kMaxPiecesInFlight),
                           tbb::make_filter<void, Piece*>(tbb::filter_mode::serial_in_order, take_piece) &
                               tbb::make_filter<Piece*, Piece*>(tbb::filter_mode::parallel, read) &
                               tbb::make_filter<Piece*, void>(tbb::filter_mode::serial_in_order, add));
    if (failed.load()) throw Stop{};
  }

  /// Room for the nodes, before the first is added: as many as the first piece's share of
  /// the array's bytes promises, a little more (the graph grows past it if need be).
  void reserve_from_first_piece(std::string_view file_text, const JsonNodeChunks& cuts, std::size_t first) {
    const JsonNodeChunks::Piece& p = cuts.pieces.front();
    const double per_byte = static_cast<double>(first) / static_cast<double>(p.end - p.begin);
    const double bytes = static_cast<double>(file_text.size() - p.begin);
    in_order_->reserve(static_cast<std::size_t>(per_byte * bytes * 1.02) + 64);
    reserved_ = true;
  }

  Graph walk_root() {
    start();
    std::string_view first = trim_end(take(doc_.raw_json_token()));
    if (first.empty() || first[0] != '{') throw Stop{};
    od::object root = take(doc_.get_object());
    std::optional<DocRef> inputs, outputs, props;
    bool nodes = false;
    for (auto field : root) {
      od::field& f = ok(field);
      od::value& v = f.value();
      std::string_view key = key_text(f, v);
      if (key == "nodes" && !nodes) {
        nodes = true;
        // After pieces: the array they were cut from must be the root's `nodes` (the
        // first `"nodes": [` in the file could be a key inside another value).
        if (nodes_at_ && offset(v.raw_json_token().data()) != *nodes_at_) throw Stop{};
        read_nodes(v);
        continue;
      }
      std::optional<DocRef>* slot = key == "inputs" ? &inputs : key == "outputs" ? &outputs
                                  : key == "properties" ? &props : nullptr;
      if (!slot || *slot) throw Stop{};  // an unknown or repeated key: the whole-document reading names it
      *slot = DocRef(&top_tree_, convert(top_tree_, v, 1));
    }
    at_end();
    if (!nodes) throw Stop{};
    // simdjson's index of the text (4 bytes per structural character, ~1 MB per 10^4 nodes)
    // is not needed to build the graph: freed first, it does not add to the load's peak.
    doc_ = od::document();
    parser_ = od::parser();
    if (in_order_)
      return textio::finish_in_order(*in_order_, inputs ? &*inputs : nullptr, outputs ? &*outputs : nullptr,
                                     props ? &*props : nullptr, src_);
    return doc_reader_.finish(inputs ? &*inputs : nullptr, outputs ? &*outputs : nullptr, props ? &*props : nullptr);
  }

 public:
  /// The whole document into one tree, read as the YAML reader reads its documents.
  Graph whole() {
    DocRef root;
    if (text_.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      start();
      od::value v = take(doc_.get_value());
      root = DocRef(&top_tree_, convert(top_tree_, v, 0));
      at_end();
    }
    return doc_reader_.read(root);
  }

 private:
  void start() {
    // Deeper than graphfuse's limit: convert() stops there and the slow path reports it.
    // simdjson allocates its buffers afresh whenever the capacity asked differs, so a walk
    // reading piece after piece keeps what it has while the pieces fit (a fresh index per
    // 1 MB piece cost a page fault per 4 KB of it).
    if (text_.size() > parser_.capacity() || parser_.max_depth() != kMaxNesting + 8) {
      std::size_t capacity = text_.size();
      if (parser_.capacity() > 0) capacity = std::max(capacity, parser_.capacity() + parser_.capacity() / 4);
      if (auto err = parser_.allocate(capacity, kMaxNesting + 8)) throw Stop{err};
    }
    // Every text read here has SIMDJSON_PADDING readable bytes past its end (Padded, or
    // the buffers of read_piece() and read_with_pieces()).
    simdjson::padded_string_view padded(text_.data(), text_.size(), text_.size() + simdjson::SIMDJSON_PADDING);
    if (auto err = parser_.iterate(padded).get(doc_)) throw Stop{err};
  }

  void at_end() {
    const char* rest = nullptr;
    if (!doc_.current_location().get(rest)) throw Stop{};  // text after the top-level value
  }

  void read_nodes(od::value& v) {
    std::string_view first = trim_end(v.raw_json_token());
    if (first.empty() || first[0] != '[') throw Stop{};
    od::array nodes = take(v.get_array());
    std::size_t count = take(nodes.count_elements());
    if (in_order_ && !reserved_) in_order_->reserve(count);
    else if (!in_order_) doc_reader_.reserve(count);
    for (auto element : nodes) {
      od::value& n = ok(element);
      node_tree_.clear();
      if (in_order_) {
        batch_.clear();
        read_node_in_order(n, batch_);
        add_batch(batch_);
      } else {
        read_node(n);
      }
    }
  }

  /// The nodes of `b`, in order, into the graph: references resolved, positions made
  /// line:column (both asked in file order).
  void add_batch(NodeBatch& b) {
    // A piece's walk reads each distinct attribute set once and its nodes share that copy;
    // the graph swaps it for its own canonical copy, so the first time is looked up and the
    // rest take the canonical copy from here (else each would be hashed and looked up
    // again under the interner's lock). Kept for one batch: until the batch is added its
    // nodes hold their sets, so an address here cannot be another set's.
    canonical_.clear();
    for (NodeBatch::Node& n : b.nodes) {
      inputs_.clear();
      for (std::uint32_t i = n.inputs_begin; i < n.inputs_end; ++i) {
        std::string_view text = b.inputs[i];
        inputs_.push_back(text.empty() ? ValueRef{} : in_order_->resolve(text, b.input_hashes[i]));
      }
      auto [line, column] = node_cursor_.at(n.offset);
      std::span<const ValueType> types;
      if (n.types) types = *n.types;
      const void* set = n.attrs.canonical() ? nullptr : n.attrs.identity();
      if (set) {
        for (const auto& [from, to] : canonical_)
          if (from == set) {
            n.attrs = to;
            set = nullptr;
            break;
          }
      }
      const Attributes& added =
          in_order_->add_node(n.id_hash, std::move(n.id), n.op, InputList(inputs_.begin(), inputs_.end()),
                              std::move(n.attrs), SourceLoc{src_.file, line + 1, column + 1},
                              std::span<std::string>(b.output_names.data() + n.outputs_begin,
                                                     n.outputs_end - n.outputs_begin),
                              types);
      if (set && added.canonical() && canonical_.size() < kMaxCanonical) canonical_.emplace_back(set, added);
    }
  }

  /// read_node's rules, for the in-order build: the node into `b`, its references still
  /// names; attribute sets and type lists written alike are read once (graphs repeat a
  /// few of them a million times).
  void read_node_in_order(od::value& v, NodeBatch& b) {
    static const std::string kLater;  // the slow path names the value
    std::string_view tok = trim_end(v.raw_json_token());
    if (tok.empty() || tok[0] != '{') throw Stop{};
    NodeBatch::Node& node = b.nodes.emplace_back();
    node.offset = offset(tok.data());
    auto obj_result = v.get_object();  // in place, as ok() says
    od::object& obj = ok(obj_result);
    unsigned seen = 0;
    node.inputs_begin = node.inputs_end = static_cast<std::uint32_t>(b.inputs.size());
    node.outputs_begin = static_cast<std::uint32_t>(b.output_names.size());
    const std::vector<ValueType>* types = nullptr;
    for (auto field : obj) {
      od::field& f = ok(field);
      od::value& fv = f.value();
      unsigned bit = node_key(raw_key(f, fv), seen);
      if (bit == 1) {
        node.id = name(fv);
      } else if (bit == 2) {
        node.op = op_type(fv);
      } else if (bit == 4) {
        std::string_view first = trim_end(fv.raw_json_token());
        if (first.empty() || first[0] != '[') throw Stop{};
        auto arr_result = fv.get_array();  // in place, as ok() says
        od::array& arr = ok(arr_result);
        for (auto element : arr) {
          od::value& e = ok(element);
          std::string_view etok = trim_end(e.raw_json_token());
          std::string_view text = etok == "null" ? std::string_view() : scalar(e, etok);
          // A decoded name lives in node_tree_, cleared for the next node.
          if (!text.empty() && (text.data() < text_.data() || text.data() >= text_.data() + text_.size()))
            text = b.kept.emplace_back(text);
          b.inputs.push_back(text);
          b.input_hashes.push_back(GraphTuning::id_hash(text));
        }
        node.inputs_end = static_cast<std::uint32_t>(b.inputs.size());
      } else if (bit == 8) {
        std::string_view first = trim_end(fv.raw_json_token());
        if (first.empty() || first[0] != '[') throw Stop{};
        auto arr_result = fv.get_array();  // in place, as ok() says
        od::array& arr = ok(arr_result);
        for (auto element : arr) {
          od::value& e = ok(element);
          b.output_names.push_back(name(e));
        }
        if (b.output_names.size() == node.outputs_begin) throw Stop{};
      } else if (bit == 16) {
        types = &cached(type_cache_, fv, [&](od::value& x) {
          DocRef list(&node_tree_, convert(node_tree_, x, 3));
          if (!list.is_seq()) throw Stop{};
          std::vector<ValueType> out;
          for (const auto& t : list) out.push_back(yaml_value_type(t, src_, kLater));
          return out;
        });
      } else {
        node.attrs = cached(attr_cache_, fv, [&](od::value& x) {
          Attributes out = attributes(x);
          if (out.has("")) throw GiveUp{};  // GraphBuilder's graph check says so
          return out;
        });
      }
    }
    node.outputs_end = static_cast<std::uint32_t>(b.output_names.size());
    if (!(seen & 1) || !(seen & 2)) throw Stop{};
    node.id_hash = GraphTuning::id_hash(node.id);
    if (types && types->size() != std::max<std::size_t>(1, node.outputs_end - node.outputs_begin)) throw Stop{};
    // The scratch list is read again for the next node's uncached types, and a piece's
    // cache is cleared for the walk's next piece while this one may wait to be added.
    if (types && (types == &scratch_types_ || reading_pieces_)) types = &b.kept_types.emplace_back(*types);
    node.types = types;
  }

  /// The interned op type a name stands for; the few distinct ones are looked up here
  /// first (interning takes a lock).
  OpType op_type(od::value& v) {
    std::string_view tok;
    std::string_view text = scalar(v, tok);
    if (text.empty()) throw Stop{};
    for (const auto& [name, op] : ops_)
      if (name == text) return op;
    OpType op = OpType::intern(text);
    if (ops_.size() < 64) ops_.emplace_back(std::string(text), op);
    return op;
  }

  /// What `read` makes of value v, kept by v's text when that is short: the same text
  /// always reads the same (and v is then skipped, not read). The texts are views into
  /// the file, which outlives the walk.
  template <class T, class Read>
  const T& cached(std::unordered_map<std::string_view, T, QuickHash>& cache, od::value& v, const Read& read) {
    std::string_view text = short_span(trim_end(v.raw_json_token()).data());
    if (!text.empty())
      if (auto it = cache.find(text); it != cache.end()) return it->second;
    T value = read(v);
    if (text.empty() || cache.size() >= kMaxCached) {
      scratch_value<T>() = std::move(value);
      return scratch_value<T>();
    }
    return cache.emplace(text, std::move(value)).first->second;
  }
  template <class T>
  T& scratch_value() {
    if constexpr (std::is_same_v<T, Attributes>) return scratch_attrs_;
    else return scratch_types_;
  }

  /// The text of the object or array starting at p, when it closes within kMaxSpan bytes;
  /// else empty (not worth keeping).
  std::string_view short_span(const char* p) const {
    const char* end = text_.data() + std::min(text_.size(), static_cast<std::size_t>(p - text_.data()) + kMaxSpan);
    if (p >= end || (*p != '{' && *p != '[')) return {};
    int depth = 0;
    for (const char* q = p; q < end; ++q) {
      if (*q == '"') {
        for (++q; q < end && *q != '"'; ++q)
          if (*q == '\\') ++q;
        if (q >= end) return {};
      } else if (*q == '{' || *q == '[') {
        ++depth;
      } else if ((*q == '}' || *q == ']') && --depth == 0) {
        return std::string_view(p, static_cast<std::size_t>(q + 1 - p));
      }
    }
    return {};
  }

  SourceLoc loc(const char* p) {
    auto [line, column] = node_cursor_.at(offset(p));
    return SourceLoc{src_.file, line + 1, column + 1};
  }

  /// A scalar's text (a view into the file, or decoded into node_tree_); Stop for a
  /// container or null.
  std::string_view scalar(od::value& v, std::string_view& tok) {
    tok = trim_end(v.raw_json_token());
    if (tok.empty() || tok[0] == '{' || tok[0] == '[' || tok == "null") throw Stop{};
    if (tok[0] == '"') {
      if (tok.size() < 2 || tok.back() != '"') throw Stop{};
      return string_text(tok.substr(1, tok.size() - 2), node_tree_);
    }
    bare(tok);
    if (marks_ && MarkedBytes::has_mark(tok)) {
      std::string s;
      MarkedBytes::restore(tok, s);
      return node_tree_.keep(std::move(s));
    }
    return tok;
  }

  /// Stop for an unquoted token that runs into a quote: simdjson takes `6"x"` as one
  /// token where graphfuse's JSON has a bare `6` and a string without a comma between
  /// (json_syntax.h), which the slow path reports.
  static void bare(std::string_view tok) {
    if (holds(tok, '"')) throw Stop{};
  }

  /// A name (id, op type, output name): a non-empty scalar.
  std::string name(od::value& v) {
    std::string_view tok;
    std::string_view text = scalar(v, tok);
    if (text.empty()) throw Stop{};
    return std::string(text);
  }

  /// The bit of a node's key (id 1, op_type 2, inputs 4, outputs 8, types 16, attributes
  /// 32), added to `seen`; Stop for an unknown or repeated key (also an escaped one: the
  /// slow path decodes it).
  static unsigned node_key(std::string_view key, unsigned& seen) {
    unsigned bit = is(key, "id") ? 1 : is(key, "op_type") ? 2 : is(key, "inputs") ? 4 : is(key, "outputs") ? 8
                 : is(key, "types") ? 16 : is(key, "attributes") ? 32 : 0;
    if (!bit || (seen & bit)) throw Stop{};
    seen |= bit;
    return bit;
  }

  /// A node's `attributes` mapping, each value typed by the YAML rules.
  Attributes attributes(od::value& v) {
    static const std::string kLater;  // the slow path names the value
    std::string_view first = trim_end(v.raw_json_token());
    if (first.empty() || first[0] != '{') throw Stop{};
    od::object obj = take(v.get_object());
    Attributes out;
    for (auto attr : obj) {
      od::field& a = ok(attr);
      od::value& av = a.value();
      std::string attr_name(string_text(raw_key(a, av), node_tree_));
      if (out.has(attr_name)) throw Stop{};
      DocRef value(&node_tree_, convert(node_tree_, av, 4));
      out.set(std::move(attr_name), yaml_attr_value(value, src_, kLater));
    }
    return out;
  }

  /// One element of `nodes`, read straight into a PendingNode with the schema reader's
  /// rules (GraphDocReader::node): id, op_type and the names are taken here, types and
  /// attribute values go through a DocTree and the YAML typing rules. Whatever those rules
  /// would refuse stops the walk, and the slow path reports it with its message; `what` is
  /// not needed until then.
  void read_node(od::value& v) {
    static const std::string kLater;  // the slow path names the value
    std::string_view tok = trim_end(v.raw_json_token());
    if (tok.empty() || tok[0] != '{') throw Stop{};
    PendingNode p;
    p.loc = loc(tok.data());
    od::object obj = take(v.get_object());
    unsigned seen = 0;
    std::optional<DocRef> types;
    for (auto field : obj) {
      od::field& f = ok(field);
      od::value& fv = f.value();
      unsigned bit = node_key(raw_key(f, fv), seen);
      if (bit == 1) {
        p.id = name(fv);
      } else if (bit == 2) {
        p.op = name(fv);
      } else if (bit == 4 || bit == 8) {
        std::string_view first = trim_end(fv.raw_json_token());
        if (first.empty() || first[0] != '[') throw Stop{};
        od::array arr = take(fv.get_array());
        for (auto element : arr) {
          od::value& e = ok(element);
          if (bit == 8) {
            p.output_names.push_back(name(e));
            continue;
          }
          std::string_view etok = trim_end(e.raw_json_token());
          if (etok == "null") {
            p.inputs.push_back(PendingRef{"", -1, true, loc(etok.data())});
            continue;
          }
          std::string_view text = scalar(e, etok);
          p.inputs.push_back(PendingRef{std::string(text), -1, text.empty(), loc(etok.data())});
        }
        if (bit == 8 && p.output_names.empty()) throw Stop{};
      } else if (bit == 16) {
        types = DocRef(&node_tree_, convert(node_tree_, fv, 3));
      } else {
        p.attrs = attributes(fv);
      }
    }
    if (!(seen & 1) || !(seen & 2)) throw Stop{};
    if (types) {
      if (!types->is_seq() || types->size() != std::max<std::size_t>(1, p.output_names.size())) throw Stop{};
      for (const auto& t : *types) p.output_types.push_back(yaml_value_type(t, src_, kLater));
    }
    doc_reader_.add_node(std::move(p));
  }

  std::uint64_t offset(const char* p) const {
    auto at = static_cast<std::size_t>(p - text_.data());
    if (marks_) return marks_->original_offset(at);
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(at) + (at < cut_ ? before_ : after_));
  }

  /// A key's raw text: between the quote simdjson points past and the quote before the ':'
  /// that precedes the value.
  std::string_view raw_key(od::field& f, od::value& v) {
    const char* k = f.key().raw();
    const char* e = v.raw_json_token().data() - 1;
    while (is_ws(*e)) --e;  // now at ':'
    --e;
    while (is_ws(*e)) --e;  // now at the closing quote
    return std::string_view(k, static_cast<std::size_t>(e - k));
  }

  std::string_view key_text(od::field& f, od::value& v) {
    std::string_view raw = raw_key(f, v);
    return string_text(raw, scratch_tree_);
  }

  /// A string's text from its raw text: the raw bytes themselves when nothing is escaped
  /// or marked, else decoded into `tree`.
  std::string_view string_text(std::string_view raw, DocTree& tree) {
    bool marked = marks_ && MarkedBytes::has_mark(raw);
    if (!marked && !holds(raw, '\\')) return raw;
    std::string restored;
    if (marked) {
      MarkedBytes::restore(raw, restored);
      raw = restored;
    }
    std::string s;
    if (!json_unescape(raw, s)) throw Stop{};
    return tree.keep(std::move(s));
  }

  std::uint32_t convert(DocTree& tree, od::value& v, int depth) {
    if (depth > kMaxNesting) throw Stop{};
    if (tree.size() >= DocTree::kMaxValues) throw Stop{};
    std::string_view tok = trim_end(v.raw_json_token());
    if (tok.empty()) throw Stop{};
    std::uint64_t pos = offset(tok.data());
    switch (tok[0]) {
      case '{': {
        std::uint32_t self = tree.add(DocTree::Kind::Map, pos);
        od::object obj = take(v.get_object());
        for (auto field : obj) {
          od::field& f = ok(field);
          od::value& fv = f.value();
          std::string_view raw = raw_key(f, fv);
          std::uint32_t k = tree.add(DocTree::Kind::Scalar, offset(raw.data() - 1));
          std::string_view text = string_text(raw, tree);
          tree.node(k).text = text;
          tree.node(k).style = DocTree::Style::Quoted;
          tree.append(self, k);
          tree.append(self, convert(tree, fv, depth + 1));
        }
        return self;
      }
      case '[': {
        std::uint32_t self = tree.add(DocTree::Kind::Seq, pos);
        od::array arr = take(v.get_array());
        for (auto element : arr) {
          od::value& e = ok(element);
          tree.append(self, convert(tree, e, depth + 1));
        }
        return self;
      }
      case '"': {
        if (tok.size() < 2 || tok.back() != '"') throw Stop{};
        std::uint32_t self = tree.add(DocTree::Kind::Scalar, pos);
        std::string_view text = string_text(tok.substr(1, tok.size() - 2), tree);
        tree.node(self).text = text;
        tree.node(self).style = DocTree::Style::Quoted;
        return self;
      }
      default: {
        // A number, true/false/null or the writer's NaN/Infinity: typed by its text later.
        if (tok == "null") return tree.add(DocTree::Kind::Null, pos);
        bare(tok);
        std::uint32_t self = tree.add(DocTree::Kind::Scalar, pos);
        if (marks_ && MarkedBytes::has_mark(tok)) {
          std::string s;
          MarkedBytes::restore(tok, s);
          tok = tree.keep(std::move(s));
        }
        tree.node(self).text = tok;
        return self;
      }
    }
  }

  std::string_view text_;  // the text being read: the file's, a piece's or the outer text's
  // Where text_'s offsets are in the file: before cut_ add before_, from it on after_
  // (read_piece(), read_with_pieces()).
  std::size_t cut_ = 0;
  std::int64_t before_ = 0, after_ = 0;
  const MarkedBytes* marks_;
  const YamlSource& src_;
  LineCursor node_cursor_, top_cursor_;
  od::parser parser_;
  od::document doc_;
  GraphDocReader doc_reader_;
  DocTree node_tree_, top_tree_;
  DocTree scratch_tree_;  // keys of the top-level mapping that needed decoding
  // The in-order build and what it keeps between nodes.
  static constexpr std::size_t kMaxSpan = 512;
  static constexpr std::size_t kMaxCached = 4096;
  std::optional<InOrderBuilder> in_order_;
  std::vector<ValueRef> inputs_;
  NodeBatch batch_;       // the node being read, when read one at a time
  static constexpr std::size_t kMaxCanonical = 32;
  static constexpr std::size_t kMaxPiecesInFlight = 8;
  std::vector<std::pair<const void*, Attributes>> canonical_;  // add_batch(): a walk's set -> the graph's
  bool reserved_ = false;  // room for the nodes made before the nodes array was met
  bool reading_pieces_ = false;  // a piece walk (read_piece()): batches outlive the caches
  std::optional<std::uint64_t> nodes_at_;  // read_with_pieces(): where the root's nodes array must open
  std::vector<std::pair<std::string, OpType>> ops_;
  std::unordered_map<std::string_view, Attributes, QuickHash> attr_cache_;
  std::unordered_map<std::string_view, std::vector<ValueType>, QuickHash> type_cache_;
  Attributes scratch_attrs_;
  std::vector<ValueType> scratch_types_;
};

/// The slow path's last word when the whole-document reading found nothing wrong where
/// simdjson stopped (not expected: the syntax check accepted the text).
[[noreturn]] void stopped(const Stop& s, const YamlSource& src) {
  src.fail(SourceLoc{src.file}, std::string("malformed YAML/JSON: ") +
                                    (s.code ? simdjson::error_message(s.code) : "cannot read this JSON document"));
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
  return with_source_line(src, [&]() -> Graph {
    Padded in(text, readable);
    std::optional<Stop> stop;
    std::optional<Error> error;
    // A big file is read in pieces on every thread (json_node_chunks.h); anything that
    // stops that reading, whether the cuts or the file, and the file is read again below
    // in one piece, which says what is wrong, if anything is.
    std::size_t piece_bytes = options.piece_bytes;
    if (piece_bytes == 0 && text.size() >= kPiecesFrom && tbb::this_task_arena::max_concurrency() > 1)
      piece_bytes = kPieceBytes;
    const std::size_t max_piece = std::max(kMaxPieceBytes, 8 * piece_bytes);
    if (auto cuts = piece_bytes ? cut_json_nodes(in.view(), piece_bytes, max_piece) : std::nullopt) {
      try {
        Graph g = JsonWalk(in.view(), nullptr, src).read_with_pieces(in.view(), *cuts);
        if (options.pieces_read) *options.pieces_read = cuts->pieces.size();
        return g;
      } catch (const Stop&) {
      } catch (const Error&) {
      } catch (const GiveUp&) {
      } catch (const SchemaProblem&) {
      }
    }
    // First straight into the graph; a file that is not producers-first, or has anything
    // the in-order build does not take or must report, is read again through GraphBuilder
    // (rare: every file graphfuse writes is in order).
    try {
      return JsonWalk(in.view(), nullptr, src).fast(true);
    } catch (const Stop&) {
    } catch (const Error&) {
    } catch (const GiveUp&) {
    } catch (const SchemaProblem&) {
    }
    try {
      return JsonWalk(in.view(), nullptr, src).fast(false);
    } catch (const Stop& s) {
      stop = s;
    } catch (const Error& e) {
      error = e;
    }
    // The slow path: the first syntax error in the file, else the whole-document reading.
    check_json_syntax(text, src);
    MarkedBytes marks;
    const MarkedBytes* marked = nullptr;
    std::optional<Padded> marked_in;
    if (stop && (stop->code == simdjson::UTF8_ERROR || stop->code == simdjson::UNESCAPED_CHARS) && marks.mark(text)) {
      marked = &marks;
      marked_in.emplace(marks.text(), 0);
      try {
        return JsonWalk(marked_in->view(), marked, src).fast(false);
      } catch (const Stop& s) {
        stop = s;
      } catch (const Error& e) {
        stop.reset();
        error = e;
      }
    }
    try {
      Graph g = JsonWalk((marked ? *marked_in : in).view(), marked, src).whole();
      if (error) throw *error;  // not expected: the whole-document reading accepted it
      return g;
    } catch (const Stop& s) {
      if (error) throw *error;
      stopped(s, src);
    }
  });
}

}  // namespace graphfuse::textio
