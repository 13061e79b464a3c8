// Internal to io: spelling attribute values and tensors as text (numbers that round-trip,
// tensor elements, base64 for opaque bytes), shared by the .graph, YAML, JSON and DOT forms.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/error.h"
#include "graphfuse/graph.h"

namespace graphfuse::textio {

/// The order writers list nodes in: topological, taking the lowest node id among ready
/// nodes (as the ONNX exporter does), so a graph whose ids are already producers-first is
/// written in id order and ONNX -> text -> ONNX keeps the node order. Throws on a cycle.
std::vector<NodeId> write_order(const Graph& g);

/// How a format spells non-finite floats.
struct FloatWords {
  const char* inf;
  const char* neg_inf;
  const char* nan;
};
inline constexpr FloatWords kGraphWords{"inf", "-inf", "nan"};
inline constexpr FloatWords kYamlWords{".inf", "-.inf", ".nan"};
inline constexpr FloatWords kJsonWords{"Infinity", "-Infinity", "NaN"};

/// The shortest text that reads back as exactly `f` through a double (the readers parse
/// numbers as double and narrow), always with a '.' or an exponent so it reads as a float.
std::string format_float(float f, const FloatWords& words);
/// Same for a double.
std::string format_double(double d, const FloatWords& words);
/// format_float / format_double appended to `out`, with no allocation of their own (the
/// JSON writer formats millions of values).
void append_float(std::string& out, float f, const FloatWords& words);
void append_double(std::string& out, double d, const FloatWords& words);
/// An integer appended to `out` (std::to_chars, no allocation).
void append_int(std::string& out, std::int64_t v);

/// Appends a tensor's elements, comma-separated, in the format's number spelling.
/// Throws Error (naming `what`) when the element type cannot be written as numbers.
void append_tensor_elements(std::string& out, const Tensor& t, const FloatWords& words,
                            const std::string& what);

/// One element as read from a file: an integer exactly, or a double.
struct Element {
  bool is_int = true;
  std::int64_t i = 0;
  double d = 0;
};
/// Builds a tensor from elements; returns "" on success or a message saying what is wrong
/// (count does not match the shape, a value out of the element type's range, ...).
std::string make_tensor(DType dtype, std::vector<std::int64_t> shape, bool has_data,
                        const std::vector<Element>& data, Tensor& out);

/// One element of a list attribute as a reader found it (a float still the double it read).
using ListElement = std::variant<std::int64_t, double, std::string, bool, Tensor>;
/// Builds a list attribute from its elements the way every reader types lists: one kind
/// throughout, ints and floats mixing into floats, [] an ints list. Returns "" on success,
/// else a message about element `bad` (a kind unlike the elements before it, or a number
/// out of float32 range).
std::string make_list(std::vector<ListElement> elems, AttrValue& out, std::size_t& bad);

template <class T>
inline constexpr bool kIsList = false;
template <class E>
inline constexpr bool kIsList<std::vector<E>> = true;

/// An attribute value in the syntax the .graph text, YAML and JSON forms share (integers,
/// true/false, lists as `[a, b]`); the format says how it spells floats, strings, tensors
/// and opaque bytes.
template <class FloatText, class StringText, class TensorText, class OpaqueText>
std::string spell_value(const AttrValue& v, FloatText&& f, StringText&& str, TensorText&& t, OpaqueText&& opaque) {
  auto one = [&](const auto& x) -> std::string {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::int64_t>) return std::to_string(x);
    else if constexpr (std::is_same_v<T, float>) return f(x);
    else if constexpr (std::is_same_v<T, std::string>) return str(x);
    else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
    else if constexpr (std::is_same_v<T, Tensor>) return t(x);
    else return opaque(x);
  };
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (!kIsList<T>) {
          return one(x);
        } else {
          std::string s = "[";
          for (std::size_t i = 0; i < x.size(); ++i) {
            if (i) s += ", ";
            if constexpr (std::is_same_v<T, std::vector<bool>>) s += one(static_cast<bool>(x[i]));
            else s += one(x[i]);
          }
          return s + "]";
        }
      },
      v);
}

/// Base64 (RFC 4648, with padding) for opaque bytes.
std::string base64_encode(std::string_view bytes);
/// Decodes base64; returns false on malformed input.
bool base64_decode(std::string_view text, std::string& out);

/// `s` between `quote` characters (double quotes for strings, backticks for .graph names),
/// with the quote, \\, \n, \t, \r escaped and other control bytes as \xHH (YAML / .graph) or,
/// when `json`, \u00HH.
std::string quote_string(std::string_view s, bool json = false, char quote = '"');
/// quote_string appended to `out`.
void append_quoted(std::string& out, std::string_view s, bool json = false, char quote = '"');
/// quote_string's escaping of `s` appended to `out`, without the quotes.
void append_escaped(std::string& out, std::string_view s, bool json = false, char quote = '"');

/// Narrows a double read from a file to a float32 attribute; false when a finite value
/// does not fit in float32.
bool to_float32(double d, float& out);

/// Runs `write` for node nd; a writer's error (a value the format cannot hold) names no
/// file, so it gets the node's position in its input file (or the graph's file).
template <class F>
auto at_node(const Graph& g, const Node& nd, F&& write) -> decltype(write()) {
  try {
    return write();
  } catch (const Error& e) {
    if (!e.loc().file.empty()) throw;
    throw Error(nd.loc.file.empty() ? SourceLoc{g.source_file} : nd.loc, e.message());
  }
}

}  // namespace graphfuse::textio
