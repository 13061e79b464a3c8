// One rule entry of a rule file: keys, values, `where:` constraints, compilation.
#include <sstream>

#include "rules/builder.h"

namespace graphfuse {

namespace {

bool valid_rule_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
  return true;
}

}  // namespace

// `where:` is a list of constraint strings, or one block scalar with a constraint per
// line (which spares YAML's reading of a leading `!` as a tag, and of commas in lists).
std::vector<rules::WhereItem> RuleSetBuilder::read_where(const File& f, const YAML::Node& where) const {
  std::vector<rules::WhereItem> out;
  auto add = [&](const std::string& text, const dsl::TextOrigin& o) {
    std::string written = text;
    written.erase(0, written.find_first_not_of(" \t"));
    written.erase(written.find_last_not_of(" \t\r") + 1);
    out.push_back(rules::WhereItem{dsl::parse_constraint(text, o), o, std::move(written)});
  };
  if (where.IsSequence()) {
    for (const YAML::Node& item : where) {
      if (!item.IsScalar() || (!item.Tag().empty() && item.Tag() != "?" && item.Tag() != "!"))
        fail(f, item.Mark(), "each `where:` item is one constraint; quote items that start with '!' "
                             "(\"!has(n.attr)\") or use a `where: |` block");
      add(item.Scalar(), origin(f, item));
    }
    return out;
  }
  if (!where.IsScalar()) fail(f, where.Mark(), "`where:` is a list of constraints or a block with one per line");
  dsl::TextOrigin block = origin(f, where);
  std::istringstream in(where.Scalar());
  std::string line;
  for (int j = 0; std::getline(in, line); ++j) {
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    dsl::TextOrigin o = block;
    o.first_line = block.first_line + j;
    o.first_column = j == 0 ? block.first_column : block.indent_column;
    o.indent_column = o.first_column;
    add(line, o);
  }
  return out;
}

void RuleSetBuilder::add_rule(const File& f, const YAML::Node& item) {
  if (!item.IsMap()) fail(f, item.Mark(), "each rule must be a mapping with name, pattern and rewrite");
  check_keys(f, item,
             {"name", "doc", "pattern", "rewrite", "where", "benefit", "priority", "enabled", "on_external_use"},
             "key", " in rule");
  for (const char* required : {"name", "pattern", "rewrite"})
    if (!item[required]) fail(f, item.Mark(), std::string("rule is missing '") + required + "'");

  Rule r;
  r.loc = loc(f, item.Mark());
  const YAML::Node name = item["name"];
  r.name = scalar(f, name, "name");
  if (!valid_rule_name(r.name))
    fail(f, name.Mark(), "rule name '" + r.name + "' must be letters, digits, '_', '.' or '-', starting with a letter");
  if (auto prev = names_.find(r.name); prev != names_.end())
    fail(f, name.Mark(), "duplicate rule name '" + r.name + "' (first defined at " + prev->second.str() + ")");
  names_.emplace(r.name, loc(f, name.Mark()));
  if (item["doc"]) r.doc = scalar(f, item["doc"], "doc");
  if (const YAML::Node b = item["benefit"]) r.benefit = integer(f, b, "benefit");
  if (const YAML::Node p = item["priority"]) r.priority = integer(f, p, "priority");
  if (const YAML::Node e = item["enabled"]) {
    try {
      r.enabled = e.as<bool>();
    } catch (const YAML::Exception&) {
      fail(f, e.Mark(), "'enabled' must be true or false");
    }
  }
  match::ExternalUse policy = match::ExternalUse::Reject;
  if (const YAML::Node u = item["on_external_use"]) {
    std::string v = scalar(f, u, "on_external_use");
    if (v == "duplicate") policy = match::ExternalUse::Duplicate;
    else if (v != "reject") fail(f, u.Mark(), "'on_external_use' must be reject (the default) or duplicate");
  }
  std::vector<rules::WhereItem> where;
  if (const YAML::Node w = item["where"]) where = read_where(f, w);

  const YAML::Node pat = item["pattern"], rw = item["rewrite"];
  r.pattern = scalar(f, pat, "pattern");
  r.rewrite = scalar(f, rw, "rewrite");
  dsl::TextOrigin pat_origin = origin(f, pat), rw_origin = origin(f, rw);
  r.pattern_loc = pat_origin.map({1, 1});
  r.rewrite_loc = rw_origin.map({1, 1});
  rules::CompiledPattern cp =
      rules::compile_pattern(dsl::parse_program(r.pattern, pat_origin), pat_origin, where, &f.ops);
  auto compiled = std::make_shared<match::CompiledRule>();
  compiled->rewrite = rules::compile_rewrite(dsl::parse_program(r.rewrite, rw_origin), cp, rw_origin, &f.ops);
  cp.program.on_external_use = policy;
  compiled->match = std::move(cp.program);
  r.root_ops = std::move(cp.root_ops);
  r.depth = cp.depth;
  r.compiled = std::move(compiled);
  set_.rules_.push_back(std::move(r));
}

}  // namespace graphfuse
