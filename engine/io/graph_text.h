// Internal to io: the .graph reader's GraphBuilder path, which parse_graph_text takes for
// files that are not producers first (and for every error); tests compare the two.
#pragma once

#include <string>
#include <string_view>

#include "graphfuse/graph.h"

namespace graphfuse::textio {

Graph parse_graph_text_through_builder(std::string_view text, const std::string& file);

}  // namespace graphfuse::textio
