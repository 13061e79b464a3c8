// Legality of a match (docs/rules.md#legality-why-a-match-may-still-not-be-rewritten), decided read-only (it runs inside parallel matching).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphfuse/graph.h"
#include "graphfuse/rewrite.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::rewrite {

/// Why `e` may not be rewritten by `rule`, or -1 when it may. Codes are RejectReason
/// values. `is_output[n]` says whether node n has a graph output (sized to capacity).
///
/// Interior nodes must be used only by the match and must not be graph outputs (unless
/// the rule says `on_external_use: duplicate`); roots may have any consumers. A single
/// root can never close a cycle: the template's inputs are all ancestors of the root.
/// With several roots, a path from one root to a value the rewrite reads would, so
/// such matches are searched for one and rejected (RejectReason::Cycle).
int check_legal(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e,
                const std::vector<char>& is_output);

/// An erase-style rewrite at a graph output (`Identity(x) => x` where the Identity is an
/// output) rewires the output to the surviving value, which then takes over the output's
/// name, so output names never change (what ONNX Runtime's identity elimination does).
/// That is refused where the survivor cannot take the name without changing something
/// else a user sees.
enum class OutputBlock : std::uint8_t {
  None,               ///< every output the rewrite moves can keep its name
  Absent,             ///< the replacement is an absent value
  GraphInput,         ///< the survivor is a graph input: its own name must stay
  SharedInitializer,  ///< the survivor is a constant that nodes outside the match also read
  OtherOutput,        ///< the survivor is already a graph output under its own name
  TwoNames,           ///< two outputs with different names would move onto one value
  NotReplaced,        ///< a root output the pattern does not name is a graph output
};

struct OutputTakeover {
  OutputBlock block = OutputBlock::None;
  ValueRef output;    ///< the root output that is a graph output (for messages)
  ValueRef survivor;  ///< its replacement; invalid for a node the rewrite creates
  std::string other;  ///< TwoNames: the other output's name
};

/// The first graph output of a match's non-taken-over roots that cannot pass its name to
/// its replacement, or block == None when all can (or none of the roots is an output).
OutputTakeover output_takeover(const Graph& g, const match::CompiledRule& rule, const match::Embedding& e);
/// One sentence for `explain`: "the survivor 'x' is a graph input; ...".
std::string describe(const Graph& g, const OutputTakeover& t);

}  // namespace graphfuse::rewrite
