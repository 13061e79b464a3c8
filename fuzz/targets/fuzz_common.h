// Shared by the libFuzzer targets (fuzz/targets/*.cpp): what counts as a finding.
//
// A target feeds its bytes to one reader. Rejecting the input with graphfuse::Error is the
// expected outcome and not a finding. A finding is anything else: a sanitizer report, a
// signal, a timeout (-timeout=5), a single allocation over -malloc_limit_mb, or one of the
// checks below failing (they abort with a message on stderr):
//   - every graph a reader accepts validates (Graph::validate);
//   - every graph a reader accepts is written by each writer (.graph, YAML, JSON, .gfb) and
//     the bytes load again, and saving what was loaded gives the same bytes
//     (save, load, save: byte-identical), the property docs/graph-formats.md promises.
// With GRAPHFUSE_FUZZ_STRICT=1 an exception that is not graphfuse::Error (a yaml-cpp or
// protobuf exception that escaped, std::bad_alloc, ...) is a finding too: the CLI then
// prints a message without a file position.
// With GRAPHFUSE_FUZZ_NO_ROUNDTRIP=1 only validation is checked (crash-only runs).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "graphfuse/error.h"
#include "graphfuse/graph.h"
#include "graphfuse/io.h"

namespace fuzz {

inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

inline bool strict() {
  static const bool on = env_flag("GRAPHFUSE_FUZZ_STRICT");
  return on;
}

inline bool roundtrip_on() {
  static const bool on = !env_flag("GRAPHFUSE_FUZZ_NO_ROUNDTRIP");
  return on;
}

[[noreturn]] inline void finding(const std::string& what, const std::string& detail = {}) {
  std::fprintf(stderr, "\n==FINDING== %s\n%s\n", what.c_str(), detail.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `f`; graphfuse::Error is an ordinary rejection. Returns true when f returned.
template <class F>
bool guarded(const char* what, F&& f) {
  try {
    f();
    return true;
  } catch (const graphfuse::Error&) {
    return false;
  } catch (const std::exception& e) {
    if (strict()) finding(std::string(what) + ": exception that is not graphfuse::Error", e.what());
    return false;
  }
}

/// One writer/reader pair: write, read back, write again; the bytes must be equal and the
/// graph read back must validate. `name` gives the reader its format (.json selects JSON).
template <class Write, class Read>
void check_roundtrip(const graphfuse::Graph& g, const char* format, Write write, Read read) {
  std::string first;
  try {
    first = write(g);
  } catch (const graphfuse::Error&) {
    return;  // a graph this format cannot express (refused with a message): not a finding
  }
  graphfuse::Graph back;
  try {
    back = read(first);
    back.validate();
  } catch (const std::exception& e) {
    finding(std::string("the ") + format + " writer's output does not load again", e.what() + ("\n--- written:\n" + first.substr(0, 4000)));
  }
  std::string second;
  try {
    second = write(back);
  } catch (const std::exception& e) {
    finding(std::string("the ") + format + " writer refuses a graph it wrote and read back", e.what());
  }
  if (second != first)
    finding(std::string("save, load, save is not byte-identical (") + format + ")",
            "--- first save:\n" + first.substr(0, 4000) + "\n--- second save:\n" + second.substr(0, 4000));
}

/// The checks for a graph some reader accepted.
inline void check_graph(const graphfuse::Graph& g) {
  try {
    g.validate();
  } catch (const graphfuse::Error& e) {
    finding("a graph a reader accepted does not validate", e.what());
  }
  if (!roundtrip_on()) return;
  using graphfuse::Graph;
  check_roundtrip(g, ".graph", [](const Graph& x) { return graphfuse::write_graph_text(x); },
                  [](const std::string& s) { return graphfuse::parse_graph_text(s, "<roundtrip>.graph"); });
  check_roundtrip(g, "YAML", [](const Graph& x) { return graphfuse::write_graph_yaml(x); },
                  [](const std::string& s) { return graphfuse::parse_graph_yaml(s, "<roundtrip>.yaml"); });
  check_roundtrip(g, "JSON", [](const Graph& x) { return graphfuse::write_graph_json(x); },
                  [](const std::string& s) { return graphfuse::parse_graph_yaml(s, "<roundtrip>.json"); });
  check_roundtrip(g, ".gfb", [](const Graph& x) { return graphfuse::write_graph_binary(x); },
                  [](const std::string& s) { return graphfuse::parse_graph_binary(s, "<roundtrip>.gfb"); });
}

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace fuzz
