// The part of a RewriteReport that must not depend on threads, visiting order or how a
// round was applied (times do), as text that tests and the apply fuzz target compare.
#pragma once

#include <sstream>
#include <string>

#include "graphfuse/rewrite.h"

namespace graphfuse::testing {

inline std::string report_counts(const RewriteReport& rep) {
  std::ostringstream o;
  for (const RuleStats& s : rep.rules) {
    o << s.rule << ' ' << s.candidates << ' ' << s.matched << ' ' << s.applied;
    for (std::size_t r : s.rejected) o << ' ' << r;
    o << '\n';
  }
  for (const RoundStats& r : rep.per_round) o << r.candidates << ' ' << r.matched << ' ' << r.applied << ' ' << r.nodes << '\n';
  for (const std::string& t : rep.trace) o << t << '\n';
  return o.str();
}

}  // namespace graphfuse::testing
