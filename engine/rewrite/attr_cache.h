// Attribute sets of rewrite template nodes, remembered by what they were built from.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graphfuse/attribute.h"
#include "graphfuse/graph.h"
#include "graphfuse/rules.h"
#include "match/program.h"
#include "match/vm.h"

namespace graphfuse::rewrite {

/// A template node's attributes are a pure function of the node and, per attribute, of a
/// matched node's attribute set (`...conv`, `conv.strides`) or op (`op_type(conv)`) when
/// no attribute is computed. A round fusing 10^5 convolutions that share a handful of
/// attribute sets builds the same few sets over and over: copying the entries, then
/// hashing and comparing them to find the Graph's canonical copy. This cache maps the
/// identities of the sets read (Attributes::identity()) to that canonical copy, so a
/// repeat costs a lookup (and a reference count, taken in bursts: see take()).
///
/// Exactness: an entry holds a copy of every set it read, so their identities stay
/// theirs (a freed set's address could otherwise come back with other entries), and a
/// set with a second holder is never changed in place (Attributes copy-on-write). Only
/// canonical results (Attributes::canonical()) are kept: what the Graph's interner would
/// have handed out anyway, so nodes share exactly the sets they shared before and
/// writers that key on identity write the same bytes.
///
/// Entries name rules and template nodes by address: a cache must not outlive the rules it saw
/// (the Rewriter that owns one lives for one rewrite_graph call).
class TemplateAttrCache {
 public:
  static constexpr std::size_t kMaxSources = 4;
  struct Key {
    const Rule* rule = nullptr;  // its name is the `_rule` attribute
    const match::RwNode* node = nullptr;
    std::array<std::uintptr_t, kMaxSources> src{};
    friend bool operator==(const Key&, const Key&) = default;
  };
  /// What node `n`'s attributes for `e` are built from, into `out`. False when they
  /// cannot be cached (a computed attribute, or more sources than kMaxSources).
  static bool key_of(const Graph& g, const Rule& rule, const match::RwNode& n, const match::Embedding& e, Key& out);
  /// Copies of the sets key_of() read, for remember(): taken on a miss, before the
  /// rewrite changes any of them.
  using Sources = std::array<Attributes, kMaxSources>;
  static void sources_of(const Graph& g, const match::RwNode& n, const match::Embedding& e, Sources& out);

  /// Sets `out` to the canonical set built before from the same sources; false when
  /// there is none. `out` is a copy like any other, but its reference is taken from a
  /// reserve the entry fills in bursts: a copy adds one to the set's shared count, and
  /// where several threads apply rewrites side by side, every increment of a count that
  /// the other threads' copies also increment moves its cache line between cores. A
  /// burst moves it once (two applying threads spent a sixth of their time on that line).
  bool take(const Key& k, Attributes& out) {
    auto it = map_.find(k);
    if (it == map_.end()) return false;
    Entry& entry = it->second;
    if (entry.reserve.empty()) {
      // Grows with use, so that sets seen a few times hold a few references only.
      entry.burst = std::min<std::uint32_t>(entry.burst * 2, kMaxBurst);
      entry.reserve.assign(entry.burst, entry.result);
    }
    out = std::move(entry.reserve.back());
    entry.reserve.pop_back();
    return true;
  }
  /// Remembers `built` (the set the node got in the Graph) when it is canonical.
  void remember(const Key& k, Sources&& sources, const Attributes& built);

 private:
  // Bounded: rule sets with endless distinct sources (computed shapes) pay a little only.
  static constexpr std::size_t kMaxEntries = 1 << 12;
  struct Hash {
    std::size_t operator()(const Key& k) const;
  };
  static constexpr std::uint32_t kMaxBurst = 64;
  struct Entry {
    Sources sources;  // keep the identities in the key theirs
    Attributes result;
    std::vector<Attributes> reserve;  // copies of result, handed out by take()
    std::uint32_t burst = 1;          // how many copies the next refill makes
  };
  std::unordered_map<Key, Entry, Hash> map_;
};

}  // namespace graphfuse::rewrite
