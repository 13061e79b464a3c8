// The `ops:` section of a rule file: commutativity, input/output counts, attribute kinds.
#include "rules/builder.h"

namespace graphfuse {

namespace {

bool same_schema(const rules::OpSchema& a, const rules::OpSchema& b) {
  return a.commutative == b.commutative && a.min_inputs == b.min_inputs && a.max_inputs == b.max_inputs &&
         a.outputs == b.outputs && a.attrs == b.attrs && a.attrs_declared == b.attrs_declared;
}

const std::vector<std::string>& kinds() {
  static const std::vector<std::string> k = {"int", "float", "string", "bool", "tensor",
                                             "ints", "floats", "strings", "bools", "tensors"};
  return k;
}

}  // namespace

void RuleSetBuilder::merge_ops(File& f, const rules::OpSchemas& from, const YAML::Mark& at) {
  for (const auto& [name, s] : from) {
    auto [it, fresh] = f.ops.emplace(name, s);
    if (!fresh && !same_schema(it->second, s))
      fail(f, at, "op '" + name + "' is declared differently at " + it->second.loc.str() + " and at " + s.loc.str());
  }
}

void RuleSetBuilder::read_ops(File& f, const YAML::Node& ops) {
  if (!ops.IsMap()) fail(f, ops.Mark(), "`ops:` maps op names to their properties, e.g. `Add: {commutative: true}`");
  check_unique_keys(f, ops);
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    const std::string name = it->first.Scalar();
    const YAML::Node props = it->second;
    if (!props.IsMap()) fail(f, props.Mark(), "the properties of op '" + name + "' must be a mapping");
    check_keys(f, props, {"commutative", "inputs", "outputs", "attrs", "doc"}, "key", " of op '" + name + "'");
    rules::OpSchema s;
    s.loc = loc(f, it->first.Mark());
    if (const YAML::Node c = props["commutative"]) {
      try {
        s.commutative = c.as<bool>();
      } catch (const YAML::Exception&) {
        fail(f, c.Mark(), "'commutative' must be true or false");
      }
    }
    if (const YAML::Node in = props["inputs"]) {
      // 2, [2, 3] or "1+" (one or more).
      if (in.IsSequence() && in.size() == 2) {
        s.min_inputs = integer(f, in[0], "inputs");
        s.max_inputs = integer(f, in[1], "inputs");
      } else if (in.IsScalar() && !in.Scalar().empty() && in.Scalar().back() == '+') {
        try {
          s.min_inputs = std::stoi(in.Scalar());
        } catch (const std::exception&) {
          fail(f, in.Mark(), "'inputs' must be a count (2), a range ([2, 3]) or a minimum (1+)");
        }
      } else if (in.IsScalar()) {
        s.min_inputs = s.max_inputs = integer(f, in, "inputs");
      } else {
        fail(f, in.Mark(), "'inputs' must be a count (2), a range ([2, 3]) or a minimum (1+)");
      }
      if (s.min_inputs < 0 || (s.max_inputs >= 0 && s.max_inputs < s.min_inputs))
        fail(f, in.Mark(), "'inputs' must be a count (2), a range ([2, 3]) or a minimum (1+)");
    }
    if (const YAML::Node out = props["outputs"]) {
      s.outputs = integer(f, out, "outputs");
      if (s.outputs < 1) fail(f, out.Mark(), "'outputs' must be at least 1");
    }
    if (const YAML::Node attrs = props["attrs"]) {
      if (!attrs.IsMap()) fail(f, attrs.Mark(), "'attrs' maps attribute names to kinds, e.g. `{strides: ints}`");
      check_unique_keys(f, attrs);
      s.attrs_declared = true;
      for (auto a = attrs.begin(); a != attrs.end(); ++a) {
        std::string kind = scalar(f, a->second, "attrs");
        if (std::find(kinds().begin(), kinds().end(), kind) == kinds().end())
          fail(f, a->second.Mark(), "unknown attribute kind '" + kind +
                                        "' (expected int, float, string, bool, tensor, ints, floats, strings, bools or tensors)");
        s.attrs[a->first.Scalar()] = kind;
      }
    }
    if (auto prev = f.ops.find(name); prev != f.ops.end()) {
      if (!same_schema(prev->second, s))
        fail(f, it->first.Mark(), "op '" + name + "' is already declared differently at " + prev->second.loc.str());
      continue;
    }
    f.ops.emplace(name, std::move(s));
  }
}

}  // namespace graphfuse
