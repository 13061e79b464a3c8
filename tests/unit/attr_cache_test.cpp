// The rewriter's template attribute cache: a cached set is the one building it would give,
// shared exactly as the Graph's interner shares it, and a changed source is never mistaken
// for the set it was.
#include <gtest/gtest.h>

#include "graphfuse/rewrite.h"
#include "graphfuse/rules.h"
#include "rewrite/attr_cache.h"

using namespace graphfuse;

namespace {

OpType op(const char* n) { return OpType::intern(n); }

const RuleSet& seed() {
  static const RuleSet rs = load_rule_files({std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml"});
  return rs;
}

Attributes conv_attrs(const std::string& padding, bool with_tensor) {
  Attributes a;
  a.set("strides", std::vector<std::int64_t>{1, 1});
  a.set("padding", padding);
  // A set holding tensor data is never interned: every node keeps its own copy.
  if (with_tensor) a.set("hint", Tensor::from_floats({2}, {1.0f, 2.0f}));
  return a;
}

// Chain i: Conv2D (attributes by `kind`) -> BiasAdd -> ReLU, fused by the seed rule.
NodeId add_chain(Graph& g, ValueRef x, int i, int kind) {
  std::string p = "c" + std::to_string(i) + "/";
  NodeId w = g.add_node(p + "w", op("Const"));
  NodeId b = g.add_node(p + "b", op("Const"));
  Attributes a = conv_attrs(kind == 1 ? "VALID" : "SAME", kind == 2);
  NodeId conv = g.add_node(p + "conv", op("Conv2D"), {x, {w, 0}}, a);
  NodeId bias = g.add_node(p + "bias", op("BiasAdd"), {{conv, 0}, {b, 0}});
  NodeId relu = g.add_node(p + "relu", op("ReLU"), {{bias, 0}});
  g.add_output({relu, 0});
  return relu;
}

}  // namespace

TEST(TemplateAttrCache, FusedNodesGetTheSetsBuildingWouldGiveSharedAsInterned) {
  Graph g;
  NodeId x = g.add_input("x");
  std::vector<NodeId> relus;
  for (int i = 0; i < 30; ++i) relus.push_back(add_chain(g, {x, 0}, i, i % 3));
  rewrite_graph(g, seed(), RewriteOptions{});
  for (int i = 0; i < 30; ++i) {
    const Node& n = g.node(relus[static_cast<std::size_t>(i)]);
    ASSERT_EQ(n.op, op("FusedConv2D_BiasAdd_ReLU"));
    Attributes want = conv_attrs(i % 3 == 1 ? "VALID" : "SAME", i % 3 == 2);
    want.set("activation", std::string("ReLU"));
    want.set("_rule", std::string("conv2d_biasadd_relu"));
    ASSERT_EQ(n.attrs, want) << i;
    // Internable sets: one canonical copy per distinct set. Tensor data: a copy each, as
    // without the cache (writers that key on identity see the same sharing).
    const Attributes& first = g.node(relus[static_cast<std::size_t>(i % 3)]).attrs;
    if (i % 3 == 2) {
      EXPECT_FALSE(n.attrs.canonical());
      if (i >= 3) {
        EXPECT_FALSE(n.attrs.shares_with(first)) << i;
      }
    } else {
      EXPECT_TRUE(n.attrs.canonical());
      EXPECT_TRUE(n.attrs.shares_with(first)) << i;
    }
  }
  g.validate();
}

TEST(TemplateAttrCache, AChangedSourceIsNotTheSetItWas) {
  Graph g;
  NodeId x = g.add_input("x");
  add_chain(g, {x, 0}, 0, 2);  // tensor data: the conv's set is its own
  NodeId conv = *g.find("c0/conv");
  const Rule& rule = seed().rules().front();
  const match::RwNode& fused = rule.compiled->rewrite.nodes.front();
  // `{...conv, ...}`: the only register the template's attributes read is the conv's.
  const match::RwAttr& spread = fused.attrs.front();
  ASSERT_EQ(spread.kind, match::RwAttr::Kind::Spread);
  match::Embedding e;
  e.nodes.assign(spread.node + 1, conv);

  using Cache = rewrite::TemplateAttrCache;
  Cache cache;
  Cache::Key before;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, before));
  Cache::Sources sources;
  Cache::sources_of(g, fused, e, sources);
  // A canonical result is kept, with a copy of the conv's set.
  Attributes built;
  built.set("padding", std::string("SAME"));
  Graph holder;
  NodeId h = holder.add_node("h", op("Const"), {}, built);
  ASSERT_TRUE(holder.node(h).attrs.canonical());
  cache.remember(before, std::move(sources), holder.node(h).attrs);
  ASSERT_NE(cache.find(before), nullptr);
  // Changing the conv's attributes in place must give its set a new identity (the cache
  // holds the old one), so the old result is not found for it.
  g.attrs(conv).set("padding", std::string("VALID"));
  Cache::Key after;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, after));
  EXPECT_FALSE(after == before);
  EXPECT_EQ(cache.find(after), nullptr);
}

TEST(TemplateAttrCache, ResultsThatAreNotCanonicalAreNotKept) {
  Graph g;
  NodeId x = g.add_input("x");
  add_chain(g, {x, 0}, 0, 0);
  const Rule& rule = seed().rules().front();
  const match::RwNode& fused = rule.compiled->rewrite.nodes.front();
  match::Embedding e;
  e.nodes.assign(fused.attrs.front().node + 1, *g.find("c0/conv"));
  using Cache = rewrite::TemplateAttrCache;
  Cache cache;
  Cache::Key key;
  ASSERT_TRUE(Cache::key_of(g, rule, fused, e, key));
  Cache::Sources sources;
  Cache::sources_of(g, fused, e, sources);
  cache.remember(key, std::move(sources), conv_attrs("SAME", true));  // a private copy: not canonical
  EXPECT_EQ(cache.find(key), nullptr);
}
