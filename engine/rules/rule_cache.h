// The rule cache's parts: where its files go and which binary may read them
// (load_rule_files_cached in graphfuse/rules.h is the whole of its use).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace graphfuse::rules {

/// The folder of cached rule sets: $XDG_CACHE_HOME/graphfuse, else ~/.cache/graphfuse; ""
/// (no cache) when GRAPHFUSE_RULE_CACHE is `off` or `0`, or neither variable is set.
std::string rule_cache_dir();

/// The GNU build id of the binary this code is linked into, as hex; "" when it has none.
/// A cache file records it, and is read only by that very build: the compiled form of a
/// rule follows the code, not the version number.
const std::string& build_id();

/// A 64-bit hash (the cache file's name and its checksum; not for adversaries).
std::uint64_t hash64(std::string_view bytes);

}  // namespace graphfuse::rules
