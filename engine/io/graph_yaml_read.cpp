// The YAML graph reader: yaml-cpp's document copied into a DocTree, then the schema reader
// shared with JSON (graph_doc_read.h). A .json file name goes to the JSON reader instead.
#include <yaml-cpp/depthguard.h>

#include "graph_doc_read.h"
#include "graph_json.h"
#include "graphfuse/io.h"

namespace graphfuse {

Graph parse_graph_yaml(std::string_view text, const std::string& file) {
  if (file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0) return textio::parse_graph_json(text, file);
  textio::YamlSource src{file, text};
  textio::DocTree tree;
  textio::DocRef root;
  try {
    YAML::Node doc = YAML::Load(std::string(text));
    root = textio::DocRef(&tree, textio::copy_yaml(doc, tree, src));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own nesting bound (about 500 levels) says only "bad file".
    src.fail(src.loc(e.mark), "malformed YAML/JSON: values nested too deeply");
  } catch (const YAML::Exception& e) {
    src.fail(src.loc(e.mark), "malformed YAML/JSON: " + e.msg);
  }
  return textio::with_source_line(src, [&] { return textio::GraphDocReader(src).read(root); });
}

}  // namespace graphfuse
