// The YAML graph reader. First streamed (yaml_graph_events.h: yaml-cpp's parser events, one
// element of `nodes` at a time) straight into the graph when the file is producers-first
// (InOrderDocReader), or into GraphBuilder (GraphDocReader) when the in-order build gives
// up. Anything else, and every error, reads the text as before: yaml-cpp's whole document
// copied into a DocTree (under the alias bound of docs/limits.md), then the schema reader shared with
// JSON (graph_doc_read.h), so graphs and messages stay that reading's. A .json file name
// goes to the JSON reader instead.
#include <yaml-cpp/depthguard.h>

#include "graph_doc_read.h"
#include "graph_json.h"
#include "graph_yaml.h"
#include "graphfuse/io.h"
#include "yaml_graph_events.h"

namespace graphfuse {

namespace textio {

namespace {

/// yaml-cpp refused the text.
[[noreturn]] void malformed(const YamlSource& src, const YAML::Exception& e) {
  // yaml-cpp's own nesting bound (about 500 levels) says only "bad file".
  if (dynamic_cast<const YAML::DeepRecursion*>(&e)) src.fail(src.loc(e.mark), "malformed YAML/JSON: values nested too deeply");
  src.fail(src.loc(e.mark), "malformed YAML/JSON: " + e.msg);
}

/// The whole document at once: the reading every message comes from.
Graph read_whole(const YamlSource& src) {
  DocTree tree;
  DocRef root;
  try {
    YAML::Node doc = YAML::Load(std::string(src.text));
    root = DocRef(&tree, copy_yaml(doc, tree, src));
  } catch (const YAML::Exception& e) {
    malformed(src, e);
  }
  return with_source_line(src, [&] { return read_graph_doc(root, src); });
}

/// The quiet streamed reading stopped: yaml-cpp's parser calls its handler until the
/// document ends and has no other way to stop early than an exception.
struct Declined {};

/// The streamed reading straight into the graph (quiet).
Graph read_in_order(const YamlSource& src) {
  InOrderDocReader reader(src);
  YamlGraphEvents doc;
  doc.read(src, [&](const DocRef& n) {
    if (!reader.add_node(n)) throw Declined{};
  });
  std::optional<Graph> g = reader.finish(doc.inputs(), doc.outputs(), doc.properties());
  if (!g) throw Declined{};
  return std::move(*g);
}

/// The streamed reading into GraphBuilder (loud: its errors are not shown, the whole
/// reading's are).
Graph read_through_builder(const YamlSource& src) {
  GraphDocReader reader(src);
  YamlGraphEvents doc;
  doc.read(src, [&](const DocRef& n) { reader.add_node(n); });
  return reader.finish(doc.inputs(), doc.outputs(), doc.properties());
}

/// The streamed reading `how`, nullopt where it stops: any other reason than the in-order
/// build's (GiveUp) would stop the GraphBuilder reading too, and the whole reading then
/// says what is wrong. Malformed text is reported at once.
std::optional<Graph> try_streamed(const YamlSource& src, YamlReading how, bool& gave_up) {
  gave_up = false;
  try {
    if (how == YamlReading::InOrder) return read_in_order(src);
    return read_through_builder(src);
  } catch (const YAML::Exception& e) {
    // The same parser over the same text: the whole reading would stop here too, before
    // it looks at any value, with this message (and a fuzzer's malformed inputs are not
    // parsed twice).
    malformed(src, e);
  } catch (const Declined&) {
    gave_up = true;
  } catch (const ReadWhole&) {
  } catch (const std::exception&) {  // an Error, or anything the whole reading may report first
  }
  return std::nullopt;
}

/// Whether some node seems to have an `outputs:` key (one not at the start of a line, where
/// the top-level key is), which the in-order build gives up on. Only a guess, to skip a
/// reading that would be thrown away: an ONNX-derived file lists its weights first, and the
/// in-order reading got through them before meeting the first named output (mobilenet_v2's
/// 47 MB: 1.4x the CPU of reading it once). Either reading gives the same graph.
bool has_node_outputs(std::string_view text) {
  for (std::size_t at = text.find("outputs:"); at != std::string_view::npos; at = text.find("outputs:", at + 1))
    if (at > 0 && text[at - 1] != '\n') return true;
  return false;
}

}  // namespace

std::optional<Graph> parse_graph_yaml_as(std::string_view text, const std::string& file, YamlReading how) {
  YamlSource src{file, text};
  if (how == YamlReading::Whole) return read_whole(src);
  bool gave_up = false;
  return try_streamed(src, how, gave_up);
}

}  // namespace textio

Graph parse_graph_yaml(std::string_view text, const std::string& file) {
  using textio::YamlReading;
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0) return textio::parse_graph_json(text, file);
  textio::YamlSource src{file, text};
  bool gave_up = textio::has_node_outputs(text);
  if (!gave_up)
    if (auto g = textio::try_streamed(src, YamlReading::InOrder, gave_up)) return std::move(*g);
  if (gave_up)
    if (auto g = textio::try_streamed(src, YamlReading::Builder, gave_up)) return std::move(*g);
  return textio::read_whole(src);
}

}  // namespace graphfuse
