// The YAML graph readings: DocTree values -> the schema reader -> GraphBuilder or the graph.
#include "graph_doc_read.h"

namespace graphfuse::textio {

TopParts top_parts(const DocRef* inputs, const DocRef* outputs, const DocRef* properties) {
  TopParts top;
  if (inputs) top.inputs = *inputs, top.has_inputs = true;
  if (outputs) top.outputs = *outputs, top.has_outputs = true;
  if (properties) top.properties = *properties, top.has_properties = true;
  return top;
}

Graph read_graph_doc(const DocRef& root, const YamlSource& src) {
  const Check loud = Check::loud(src);
  TopParts top;
  read_top(root, loud, top);
  GraphDocReader reader(src);
  reader.reserve(top.nodes.size());
  for (const auto& n : top.nodes) reader.add_node(n);
  return reader.finish(top.has_inputs ? &top.inputs : nullptr, top.has_outputs ? &top.outputs : nullptr,
                       top.has_properties ? &top.properties : nullptr);
}

// yaml-cpp's positions are lines and columns (no cursor).
GraphDocReader::GraphDocReader(const YamlSource& src)
    : src_(src), reader_(Check::loud(src)), sink_(Positions{src.file, nullptr}) {}

void GraphDocReader::add_node(const DocRef& n) {
  NodeParts p;
  p.pos = n.position();
  batch_.clear();
  reader_.parts(n, p);
  reader_.read(p, batch_);
  sink_.add(batch_);
}

Graph GraphDocReader::finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties) {
  return sink_.finish(top_parts(inputs, outputs, properties), src_);
}

InOrderDocReader::InOrderDocReader(const YamlSource& src)
    : src_(src), reader_(Check::quiet(src), false), builder_(src.file), sink_(builder_, Positions{src.file, nullptr}) {}

bool InOrderDocReader::add_node(const DocRef& n) {
  NodeParts p;
  p.pos = n.position();
  batch_.clear();
  return reader_.parts(n, p) && reader_.read(p, batch_) && sink_.add(batch_);
}

std::optional<Graph> InOrderDocReader::finish(const DocRef* inputs, const DocRef* outputs, const DocRef* properties) {
  return sink_.finish(top_parts(inputs, outputs, properties), Check::quiet(src_));
}

}  // namespace graphfuse::textio
