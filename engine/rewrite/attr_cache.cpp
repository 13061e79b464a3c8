// The template attribute cache: keys from the sets and ops a template node reads.
#include "rewrite/attr_cache.h"

#include <functional>

#include "graph/storage.h"

namespace graphfuse::rewrite {

bool TemplateAttrCache::key_of(const Graph& g, const Rule& rule, const match::RwNode& n, const match::Embedding& e,
                               Key& out) {
  out.rule = &rule;
  out.node = &n;
  out.src.fill(0);
  std::size_t k = 0;
  for (const match::RwAttr& a : n.attrs) {
    using Kind = match::RwAttr::Kind;
    if (a.kind == Kind::Literal) continue;
    if (a.kind == Kind::Computed || k == kMaxSources) return false;
    const Node& src = records::node(g, e.nodes[a.node]);
    out.src[k++] = a.kind == Kind::OpTypeOf ? src.op.index() : reinterpret_cast<std::uintptr_t>(src.attrs.identity());
  }
  return true;
}

void TemplateAttrCache::sources_of(const Graph& g, const match::RwNode& n, const match::Embedding& e, Sources& out) {
  std::size_t k = 0;
  for (const match::RwAttr& a : n.attrs)
    if (a.kind != match::RwAttr::Kind::Literal && k < kMaxSources) out[k++] = g.node(e.nodes[a.node]).attrs;
}

void TemplateAttrCache::remember(const Key& k, Sources&& sources, const Attributes& built) {
  if (!built.empty() && !built.canonical()) return;
  if (map_.size() >= kMaxEntries) return;
  map_.try_emplace(k, Entry{std::move(sources), built, {}, 1});
}

std::size_t TemplateAttrCache::Hash::operator()(const Key& k) const {
  std::size_t h = std::hash<const void*>{}(k.node) ^ std::hash<const void*>{}(k.rule);
  for (std::uintptr_t w : k.src) h = (h ^ w) * 0x9e3779b97f4a7c15ull + (h >> 29);
  return h;
}

}  // namespace graphfuse::rewrite
