// Internal to io: the YAML graph reader's three readings (graph_yaml_read.cpp), each on its
// own, for tests that compare them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

enum class YamlReading {
  InOrder,  ///< streamed straight into the graph (producers-first files)
  Builder,  ///< streamed into GraphBuilder
  Whole,    ///< yaml-cpp's whole document, then GraphBuilder: every error message's reading
};

/// The graph one reading gives; nullopt where that reading gives up on the text or stops at
/// a schema error (whose message the whole reading gives). Malformed YAML throws the
/// whole reading's error from every reading. parse_graph_yaml takes the first of the three
/// that reads the text.
std::optional<Graph> parse_graph_yaml_as(std::string_view text, const std::string& file, YamlReading how);

}  // namespace graphfuse::textio
