// Internal to io: a strict JSON reader into a DocTree, keeping every value's line and
// column so the graph reader's errors point into the file as they do for YAML.
#pragma once

#include <string_view>

#include "json_tree.h"
#include "yaml_values.h"

namespace graphfuse::textio {

/// Parses `text` (one JSON value) into `tree` and returns the root's index, or
/// DocTree::kNone when the text holds only whitespace. Beyond JSON it reads the bare words
/// the JSON writer uses for floats (NaN, Infinity, -Infinity): any bare token becomes a
/// plain scalar, typed later by the YAML rules. Syntax errors fail through `src` as
/// "malformed YAML/JSON: ..." at the offending character.
std::uint32_t parse_json(std::string_view text, DocTree& tree, const YamlSource& src);

}  // namespace graphfuse::textio
