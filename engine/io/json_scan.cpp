// A JSON graph text walked with simdjson's On-Demand API into the schema reader; see
// json_scan.h.
#include "json_scan.h"

#include <algorithm>
#include <cstring>

namespace graphfuse::textio {

namespace od = simdjson::ondemand;

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// Whether s holds c. Names and numbers are a few bytes: a loop the compiler keeps inline
/// beats a call to memchr (a few percent of a 10^6-node load); long strings still get it.
bool holds(std::string_view s, char c) {
  if (s.size() > 32) return s.find(c) != std::string_view::npos;
  for (char x : s)
    if (x == c) return true;
  return false;
}

std::string_view trim_end(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

/// An unquoted token that runs into a quote: simdjson takes `6"x"` as one token where
/// graphfuse's JSON has a bare `6` and a string without a comma between (json_syntax.h),
/// which the diagnostic reading reports.
bool bare(std::string_view tok) { return !holds(tok, '"'); }

const std::string kNoName;  // `what` of a quiet reading: no message is built

}  // namespace

JsonScan::JsonScan(std::string_view text, const MarkedBytes* marks, const YamlSource& src, const Check& check)
    : text_(text), marks_(marks), src_(src), check_(check), reader_(check), node_cursor_(src.text),
      top_cursor_(src.text), add_cursor_(src.text) {
  // Cursors each asked in increasing order: the nodes' values', the top-level values' (the
  // writer puts inputs and outputs before the nodes), and the added nodes'.
  node_tree_.offsets(&node_cursor_);
  top_tree_.offsets(&top_cursor_);
  reader_.set_text(text_);
}

void JsonScan::read_from(std::string& buffer, std::initializer_list<std::string_view> parts, std::size_t cut,
                         std::int64_t before, std::int64_t after) {
  // The caches are keyed by views into the text read, and a piece's buffer is read again
  // for the walk's next piece, so they start empty (a few distinct sets per piece).
  buffer.clear();
  std::size_t size = 0;
  for (std::string_view part : parts) size += part.size();
  buffer.reserve(size + simdjson::SIMDJSON_PADDING);
  for (std::string_view part : parts) buffer.append(part);
  buffer.append(simdjson::SIMDJSON_PADDING, ' ');
  text_ = std::string_view(buffer.data(), size);
  reader_.set_text(text_);
  cut_ = cut;
  before_ = before;
  after_ = after;
  attr_cache_.clear();
  type_cache_.clear();
}

bool JsonScan::start() {
  // Deeper than graphfuse's limit: convert() stops there. simdjson allocates its buffers
  // afresh whenever the capacity asked differs, so a walk reading piece after piece keeps
  // what it has while the pieces fit (a fresh index per 1 MB piece cost a page fault per
  // 4 KB of it).
  if (text_.size() > parser_.capacity() || parser_.max_depth() != kMaxNesting + 8) {
    std::size_t capacity = text_.size();
    if (parser_.capacity() > 0) capacity = std::max(capacity, parser_.capacity() + parser_.capacity() / 4);
    if (auto err = parser_.allocate(capacity, kMaxNesting + 8)) return stop(err);
  }
  // Every text read here has SIMDJSON_PADDING readable bytes past its end (the caller's, or
  // read_from()'s buffers).
  simdjson::padded_string_view padded(text_.data(), text_.size(), text_.size() + simdjson::SIMDJSON_PADDING);
  if (auto err = parser_.iterate(padded).get(doc_)) return stop(err);
  return true;
}

bool JsonScan::at_end() {
  const char* rest = nullptr;
  if (!doc_.current_location().get(rest)) return stop();  // text after the top-level value
  return true;
}

std::optional<Graph> JsonScan::read_in_order(InOrderBuilder& builder, InOrderSink& sink) {
  TopParts top;
  if (!walk_root(builder, sink, top)) return std::nullopt;
  return sink.finish(top, check_);
}

bool JsonScan::walk_root(InOrderBuilder& builder, InOrderSink& sink, TopParts& top) {
  if (!start()) return false;
  std::string_view first;
  if (!take(doc_.raw_json_token(), first)) return false;
  first = trim_end(first);
  if (first.empty() || first[0] != '{') return stop();
  od::object root;
  if (!take(doc_.get_object(), root)) return false;
  for (auto field : root) {
    od::field* f = ok(field);
    if (!f) return false;
    od::value& v = f->value();
    std::string_view key;
    if (!string_text(raw_key(*f, v), scratch_tree_, key)) return false;
    if (key == "nodes" && !top.has_nodes) {
      top.has_nodes = true;
      // After pieces: the array they were cut from must be the root's `nodes` (the
      // first `"nodes": [` in the file could be a key inside another value).
      if (nodes_at_ && offset(v.raw_json_token().data()) != *nodes_at_) return stop();
      auto reserve = [&](std::size_t count) {
        if (!reserved_) builder.reserve(count);
      };
      if (!read_nodes(v, reserve, [&](NodeBatch& b) { return sink.add(b); })) return false;
      continue;
    }
    DocRef* slot = key == "inputs" ? &top.inputs : key == "outputs" ? &top.outputs : key == "properties" ? &top.properties
                                                                                                          : nullptr;
    bool* has = key == "inputs" ? &top.has_inputs : key == "outputs" ? &top.has_outputs : &top.has_properties;
    if (!slot || *has) return stop();  // an unknown or repeated key: the diagnostic reading names it
    std::uint32_t value = 0;
    if (!convert(top_tree_, v, 1, value)) return false;
    *slot = DocRef(&top_tree_, value);
    *has = true;
  }
  if (!at_end()) return false;
  if (!top.has_nodes) return stop();
  // simdjson's index of the text (4 bytes per structural character, ~1 MB per 10^4 nodes)
  // is not needed to build the graph: freed first, it does not add to the load's peak.
  doc_ = od::document();
  parser_ = od::parser();
  return true;
}

template <class Reserve, class Add>
bool JsonScan::read_nodes(od::value& v, const Reserve& reserve, const Add& add) {
  std::string_view first = trim_end(v.raw_json_token());
  if (first.empty() || first[0] != '[') return stop();
  od::array nodes;
  if (!take(v.get_array(), nodes)) return false;
  std::size_t count = 0;
  if (!take(nodes.count_elements(), count)) return false;
  reserve(count);
  for (auto element : nodes) {
    od::value* n = ok(element);
    if (!n) return false;
    node_tree_.clear();
    batch_.clear();
    if (!read_node(*n, batch_) || !add(batch_)) return false;
  }
  return true;
}

bool JsonScan::read_piece(std::string_view file_text, std::size_t begin, std::size_t end, std::string& buffer,
                          NodeBatch& batch) {
  batch.clear();
  // The '[' is not the file's: the piece's offsets are one less in the file.
  read_from(buffer, {"[", file_text.substr(begin, end - begin), "]"}, 0, 0, static_cast<std::int64_t>(begin) - 1);
  reading_pieces_ = true;
  // simdjson's On-Demand walk does not check what it skips (a value read as a raw token
  // is skipped by counting brackets), so a piece cut inside a node can read as nodes:
  // `{"op_type": "X": {...}}}` reads as a node with an op. Across a whole file the
  // brackets have to come out right at the end; a piece alone must be checked.
  if (!json_syntax_ok(text_)) return stop();
  if (!start()) return false;
  od::array nodes;
  if (!take(doc_.get_array(), nodes)) return false;
  for (auto element : nodes) {
    od::value* n = ok(element);
    if (!n) return false;
    node_tree_.clear();
    if (!read_node(*n, batch)) return false;
  }
  return at_end();
}

void JsonScan::around_pieces(std::string_view file_text, std::size_t array_open, std::size_t tail) {
  nodes_at_ = array_open;
  // The outer text: the file up to the array's '[', then from the tail on; its offsets
  // past the '[' are the tail's.
  const std::size_t head = array_open + 1;
  read_from(buffer_, {file_text.substr(0, head), file_text.substr(tail)}, head, 0,
            static_cast<std::int64_t>(tail) - static_cast<std::int64_t>(head));
}

bool JsonScan::read_node(od::value& v, NodeBatch& batch) {
  NodeParts p;
  if (check_.loud()) {
    std::uint32_t node = 0;
    if (!convert(node_tree_, v, 2, node)) return false;
    DocRef n(&node_tree_, node);
    p.pos = n.position();
    if (!reader_.parts(n, p)) return false;
  } else if (!gather(v, p)) {
    return false;
  }
  return reader_.read(p, batch);
}

bool JsonScan::gather(od::value& v, NodeParts& p) {
  std::string_view tok = trim_end(v.raw_json_token());
  if (tok.empty() || tok[0] != '{') return stop();
  p.pos = offset(tok.data());
  auto obj_result = v.get_object();  // in place, as ok() says
  od::object* obj = ok(obj_result);
  if (!obj) return false;
  for (auto field : *obj) {
    od::field* f = ok(field);
    if (!f) return false;
    od::value& fv = f->value();
    // A key as written: an escaped one is no schema key here, and the diagnostic reading
    // decodes it.
    NodeParts::Key key = node_key(raw_key(*f, fv));
    if (key == NodeParts::kKeys || p.has(key)) return stop();
    if (key == NodeParts::kAttrs) {
      p.attrs_read = cached(attr_cache_, scratch_attrs_, trim_end(fv.raw_json_token()), [&](Attributes& out) {
        std::uint32_t value = 0;
        return convert(node_tree_, fv, 3, value) && reader_.attributes(DocRef(&node_tree_, value), kNoName, out);
      });
      if (!p.attrs_read || !p.set(key, DocRef())) return false;
    } else if (key == NodeParts::kTypes) {
      p.types_read = cached(type_cache_, scratch_types_, trim_end(fv.raw_json_token()), [&](std::vector<ValueType>& out) {
        std::uint32_t value = 0;
        return convert(node_tree_, fv, 3, value) && reader_.types(DocRef(&node_tree_, value), kNoName, out);
      });
      if (!p.types_read || !p.set(key, DocRef())) return false;
      // The scratch list is read again for the next node's uncached types, and a piece's
      // cache is cleared for the walk's next piece while this one may wait to be added.
      p.copy_types = p.types_read == &scratch_types_ || reading_pieces_;
    } else {
      std::uint32_t value = 0;
      if (!convert(node_tree_, fv, 3, value)) return false;
      p.set(key, DocRef(&node_tree_, value));
    }
  }
  return true;
}

template <class T, class Read>
const T* JsonScan::cached(std::unordered_map<std::string_view, T, QuickHash>& cache, T& scratch, std::string_view tok,
                          const Read& read) {
  std::string_view text = short_span(tok.data());
  if (!text.empty())
    if (auto it = cache.find(text); it != cache.end()) return &it->second;
  T value{};
  if (!read(value)) return nullptr;
  if (text.empty() || cache.size() >= kMaxCached) {
    scratch = std::move(value);
    return &scratch;
  }
  return &cache.emplace(text, std::move(value)).first->second;
}

/// The text of the object or array starting at p, when it closes within kMaxSpan bytes;
/// else empty (not worth keeping).
std::string_view JsonScan::short_span(const char* p) const {
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

std::uint64_t JsonScan::offset(const char* p) const {
  auto at = static_cast<std::size_t>(p - text_.data());
  if (marks_) return marks_->original_offset(at);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(at) + (at < cut_ ? before_ : after_));
}

/// A key's raw text: between the quote simdjson points past and the quote before the ':'
/// that precedes the value.
std::string_view JsonScan::raw_key(od::field& f, od::value& v) {
  const char* k = f.key().raw();
  const char* e = v.raw_json_token().data() - 1;
  while (is_ws(*e)) --e;  // now at ':'
  --e;
  while (is_ws(*e)) --e;  // now at the closing quote
  return std::string_view(k, static_cast<std::size_t>(e - k));
}

/// A string's text from its raw text: the raw bytes themselves when nothing is escaped or
/// marked, else decoded into `tree`.
bool JsonScan::string_text(std::string_view raw, DocTree& tree, std::string_view& out) {
  bool marked = marks_ && MarkedBytes::has_mark(raw);
  if (!marked && !holds(raw, '\\')) {
    out = raw;
    return true;
  }
  std::string restored;
  if (marked) {
    MarkedBytes::restore(raw, restored);
    raw = restored;
  }
  std::string s;
  if (!json_unescape(raw, s)) return stop();
  out = tree.keep(std::move(s));
  return true;
}

bool JsonScan::leaf(DocTree& tree, std::string_view tok, std::uint32_t& out) {
  std::uint64_t pos = offset(tok.data());
  if (tok[0] == '"') {
    if (tok.size() < 2 || tok.back() != '"') return stop();
    out = tree.add(DocTree::Kind::Scalar, pos);
    std::string_view text;
    if (!string_text(tok.substr(1, tok.size() - 2), tree, text)) return false;
    DocTree::Node& n = tree.node(out);
    n.text = text;
    n.style = DocTree::Style::Quoted;
    return true;
  }
  // A number, true/false/null or the writer's NaN/Infinity: typed by its text later.
  if (tok == "null") {
    out = tree.add(DocTree::Kind::Null, pos);
    return true;
  }
  if (!bare(tok)) return stop();
  out = tree.add(DocTree::Kind::Scalar, pos);
  if (marks_ && MarkedBytes::has_mark(tok)) {
    std::string s;
    MarkedBytes::restore(tok, s);
    tok = tree.keep(std::move(s));
  }
  tree.node(out).text = tok;
  return true;
}

bool JsonScan::convert(DocTree& tree, od::value& v, int depth, std::uint32_t& out, bool skip_nodes) {
  if (depth > kMaxNesting || tree.size() >= DocTree::kMaxValues) return stop();
  std::string_view tok = trim_end(v.raw_json_token());
  if (tok.empty()) return stop();
  if (tok[0] != '{' && tok[0] != '[') return leaf(tree, tok, out);
  std::uint64_t pos = offset(tok.data());
  switch (tok[0]) {
    case '{': {
      out = tree.add(DocTree::Kind::Map, pos);
      auto obj_result = v.get_object();  // in place, as ok() says
      od::object* obj = ok(obj_result);
      if (!obj) return false;
      for (auto field : *obj) {
        od::field* f = ok(field);
        if (!f) return false;
        od::value& fv = f->value();
        std::string_view raw = raw_key(*f, fv);
        std::uint32_t k = tree.add(DocTree::Kind::Scalar, offset(raw.data() - 1));
        std::string_view text;
        if (!string_text(raw, tree, text)) return false;
        tree.node(k).text = text;
        tree.node(k).style = DocTree::Style::Quoted;
        tree.append(out, k);
        std::uint32_t value = 0;
        std::string_view value_tok = trim_end(fv.raw_json_token());
        if (skip_nodes && text == "nodes" && !value_tok.empty() && value_tok[0] == '[') {
          value = tree.add(DocTree::Kind::Seq, offset(value_tok.data()));
        } else if (!convert(tree, fv, depth + 1, value)) {
          return false;
        }
        tree.append(out, value);
      }
      return true;
    }
    case '[': {
      out = tree.add(DocTree::Kind::Seq, pos);
      auto arr_result = v.get_array();  // in place, as ok() says
      od::array* arr = ok(arr_result);
      if (!arr) return false;
      for (auto element : *arr) {
        od::value* e = ok(element);
        std::uint32_t value = 0;
        if (!e || !convert(tree, *e, depth + 1, value)) return false;
        tree.append(out, value);
      }
      return true;
    }
    default:
      return stop();  // not reached: leaf() took it
  }
}

/// The diagnostic reading's last word where simdjson stopped and no rule said why (not
/// expected: the syntax check accepted the text).
[[noreturn]] static void stopped(simdjson::error_code code, const YamlSource& src) {
  src.fail(SourceLoc{src.file}, std::string("malformed YAML/JSON: ") +
                                    (code ? simdjson::error_message(code) : "cannot read this JSON document"));
}

Graph JsonScan::diagnose() {
  // The top-level mapping first, its nodes array's elements left out: its keys' problems
  // come before any node's, as in a reading of the whole document.
  DocRef root;
  if (text_.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    od::value v;
    std::uint32_t index = 0;
    if (!start() || !take(doc_.get_value(), v) || !convert(top_tree_, v, 0, index, true) || !at_end())
      stopped(error_, src_);
    root = DocRef(&top_tree_, index);
  }
  TopParts top;
  read_top(root, check_, top);
  // Then the nodes, one at a time into GraphBuilder, and what follows them.
  BuilderSink sink(positions());
  if (!start()) stopped(error_, src_);
  od::object obj;
  if (!take(doc_.get_object(), obj)) stopped(error_, src_);
  for (auto field : obj) {
    od::field* f = ok(field);
    if (!f) stopped(error_, src_);
    od::value& v = f->value();
    std::string_view key;
    if (!string_text(raw_key(*f, v), scratch_tree_, key)) stopped(error_, src_);
    if (key != "nodes") continue;
    auto reserve = [&](std::size_t count) { sink.reserve(count); };
    auto add = [&](NodeBatch& b) {
      sink.add(b);
      return true;
    };
    if (!read_nodes(v, reserve, add)) stopped(error_, src_);
    break;
  }
  return sink.finish(top, src_);
}

}  // namespace graphfuse::textio
