// yaml-cpp's parser events -> the graph document's top-level values and one DocTree per
// element of `nodes`; see yaml_graph_events.h.
#include "yaml_graph_events.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <istream>
#include <streambuf>
#include <vector>

namespace graphfuse::textio {

namespace {

/// The text as an input stream, without the copy std::istringstream would make.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view s) {
    char* p = const_cast<char*>(s.data());  // a get area is only read
    setg(p, p, p + s.size());
  }
};

}  // namespace

class YamlGraphHandler : public YAML::EventHandler {
 public:
  YamlGraphHandler(YamlGraphEvents& out, const YamlSource& src, const std::function<void(const DocRef&)>& on_node)
      : out_(out),
        on_node_(on_node),
        left_(std::min<std::size_t>(yaml_value_limit(src.text.size()), DocTree::kMaxValues)) {}

  bool done() const { return at_ == At::Done; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {
    if (at_ != At::Done) throw ReadWhole{};
  }
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { value(DocTree::Kind::Null, m); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { throw ReadWhole{}; }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t, const std::string& text) override {
    value(DocTree::Kind::Scalar, m, &text, &tag);
  }
  // The copy ignores the tags of lists and mappings, and an anchor changes nothing
  // where no alias refers to it.
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(DocTree::Kind::Seq, m);
  }
  void OnSequenceEnd() override { end(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(DocTree::Kind::Map, m);
  }
  void OnMapEnd() override { end(); }

 private:
  // Where the next event is: before the root mapping, at a top-level key, at its value, at
  // the start of `nodes`, in `nodes` (between elements), past the root.
  enum class At { Start, Key, Value, NodesStart, Nodes, Done };

  void value(DocTree::Kind kind, const YAML::Mark& m, const std::string* text = nullptr,
             const std::string* tag = nullptr) {
    if (left_ == 0) throw ReadWhole{};  // the copy's bound (its message comes from the copy)
    --left_;
    if (tree_) return add(kind, m, text, tag);
    switch (at_) {
      case At::Start:
        if (kind != DocTree::Kind::Map) throw ReadWhole{};
        at_ = At::Key;
        return;
      case At::Key:
        if (kind != DocTree::Kind::Scalar) throw ReadWhole{};
        key(*text);
        return;
      case At::Value:
        tree_ = &out_.top_;
        return add(kind, m, text, tag);
      case At::NodesStart:
        if (kind != DocTree::Kind::Seq) throw ReadWhole{};
        at_ = At::Nodes;
        return;
      case At::Nodes:
        node_.clear();
        tree_ = &node_;
        return add(kind, m, text, tag);
      case At::Done:
        break;
    }
    throw ReadWhole{};
  }

  /// A top-level key: one of the schema's, each once.
  void key(const std::string& k) {
    slot_ = k == "inputs" ? &out_.inputs_ : k == "outputs" ? &out_.outputs_ : k == "properties" ? &out_.properties_
                                                                                                 : nullptr;
    if (k == "nodes") {
      if (nodes_seen_) throw ReadWhole{};
      nodes_seen_ = true;
      at_ = At::NodesStart;
      return;
    }
    if (!slot_ || *slot_) throw ReadWhole{};
    at_ = At::Value;
  }

  /// A value inside the one being built: copy_yaml's node for it.
  void add(DocTree::Kind kind, const YAML::Mark& m, const std::string* text, const std::string* tag) {
    std::uint32_t self = tree_->add(kind, DocTree::at_line(m.line, m.column));
    if (kind == DocTree::Kind::Scalar) set_yaml_scalar(*tree_, self, *text, *tag);
    if (open_.empty()) root_ = self;
    else tree_->append(open_.back(), self);
    if (kind == DocTree::Kind::Seq || kind == DocTree::Kind::Map) {
      if (open_.size() >= static_cast<std::size_t>(kMaxNesting)) throw ReadWhole{};
      open_.push_back(self);
    } else if (open_.empty()) {
      complete();
    }
  }

  void end() {
    if (tree_) {
      open_.pop_back();
      if (open_.empty()) complete();
    } else if (at_ == At::Nodes) {
      at_ = At::Key;  // the end of `nodes`
    } else if (at_ == At::Key) {
      at_ = At::Done;  // the end of the root mapping
    } else {
      throw ReadWhole{};
    }
  }

  /// The value being built is whole: an element of `nodes`, or a top-level value.
  void complete() {
    DocTree* t = tree_;
    tree_ = nullptr;
    if (t == &node_) return on_node_(DocRef(&node_, root_));
    *slot_ = DocRef(t, root_);
    at_ = At::Key;
  }

  YamlGraphEvents& out_;
  const std::function<void(const DocRef&)>& on_node_;
  std::size_t left_;  // values the document may still have (the copy's bound)
  At at_ = At::Start;
  bool nodes_seen_ = false;
  std::optional<DocRef>* slot_ = nullptr;  // where the top-level value being read goes
  DocTree node_;                           // the element of `nodes` being read
  DocTree* tree_ = nullptr;                // the tree a value is being built in, if any
  std::vector<std::uint32_t> open_;        // its lists and mappings not yet ended
  std::uint32_t root_ = 0;
};

void YamlGraphEvents::read(const YamlSource& src, const std::function<void(const DocRef&)>& on_node) {
  ViewBuf buf(src.text);
  std::istream in(&buf);
  YAML::Parser parser(in);
  YamlGraphHandler handler(*this, src, on_node);
  // Only the first document, as YAML::Load reads.
  if (!parser.HandleNextDocument(handler) || !handler.done()) throw ReadWhole{};
}

}  // namespace graphfuse::textio
