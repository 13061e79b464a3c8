// Compiled rule sets kept between processes: compiling rules/onnx takes ~40 ms, reading
// it back ~1 ms (docs/rules.md, "The rule cache").
//
// A cache file belongs to one list of rule paths (named by its hash) and holds the build id
// of the binary that wrote it, the paths, and the rule set (rule_codec.h) with the size and
// hash of every file it was compiled from. It is used only when that build reads it, the
// paths name the same files, and every file (includes too) still reads the same; otherwise
// the rules are compiled as without a cache and the file is replaced. Only rule sets that
// compiled without error are written, so errors are always the compiler's.
#include "rules/rule_cache.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "graphfuse/io.h"
#include "graphfuse/rules.h"
#include "io/file_map.h"

#include "rules/builder.h"
#include "rules/rule_codec.h"

namespace graphfuse {

namespace rules {

namespace fs = std::filesystem;

std::string rule_cache_dir() {
  const char* opt = std::getenv("GRAPHFUSE_RULE_CACHE");
  if (opt && (std::strcmp(opt, "off") == 0 || std::strcmp(opt, "0") == 0)) return "";
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/graphfuse";
  const char* home = std::getenv("HOME");
  if (home && home[0] != '\0') return std::string(home) + "/.cache/graphfuse";
  return "";
}

namespace {

// dl_iterate_phdr callback: the build id note of the loaded object holding `*data`'s address.
int read_build_id(dl_phdr_info* info, std::size_t, void* data) {
  auto* out = static_cast<std::pair<ElfW(Addr), std::string>*>(data);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const ElfW(Addr) start = info->dlpi_addr + ph.p_vaddr;
    holds = holds || (ph.p_type == PT_LOAD && out->first >= start && out->first < start + ph.p_memsz);
  }
  if (!holds) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char* hex = "0123456789abcdef";
        for (std::size_t k = 0; k < note->n_descsz; ++k) {
          const auto b = static_cast<unsigned char>(desc[k]);
          out->second += hex[b >> 4];
          out->second += hex[b & 15];
        }
        return 1;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

constexpr std::string_view kMagic = "graphfuse rules\n";

// A cache file: kMagic, the checksum of the rest, then the rest.

void put(std::string& out, std::string_view s) {
  const std::uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(s);
}

bool take(std::string_view& in, std::string_view& s) {
  std::uint64_t n = 0;
  if (in.size() < sizeof n) return false;
  std::memcpy(&n, in.data(), sizeof n);
  in.remove_prefix(sizeof n);
  if (n > in.size()) return false;
  s = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

// A file's text as the cache keeps it: its size and hash, as text.
std::string text_key(std::string_view text) {
  return std::to_string(text.size()) + ":" + std::to_string(hash64(text));
}

// Cache files are rules-<16 hex digits>.bin; nothing else in the folder is touched.
bool is_cache_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.size() == 26 && name.starts_with("rules-") && name.ends_with(".bin");
}

std::string cache_file(const std::string& dir, const std::vector<std::string>& paths) {
  std::error_code ec;
  std::string key = fs::current_path(ec).string();
  for (const std::string& p : paths) key.append(1, '\0').append(p);
  char name[40];
  std::snprintf(name, sizeof name, "rules-%016llx.bin", static_cast<unsigned long long>(hash64(key)));
  return dir + "/" + name;
}

// The rule set in `bytes` if it was written by this build for `files` (the expanded paths)
// and every file it was compiled from reads as it did then.
std::optional<RuleSet> read_cached(std::string_view bytes, const std::vector<std::string>& files) {
  if (bytes.substr(0, kMagic.size()) != kMagic || bytes.size() < kMagic.size() + 8) return std::nullopt;
  bytes.remove_prefix(kMagic.size());
  std::uint64_t sum = 0;
  std::memcpy(&sum, bytes.data(), sizeof sum);
  bytes.remove_prefix(sizeof sum);
  if (hash64(bytes) != sum) return std::nullopt;
  std::string_view build, count, path;
  if (!take(bytes, build) || build != build_id() || !take(bytes, count) || count.size() != 8) return std::nullopt;
  std::uint64_t n = 0;
  std::memcpy(&n, count.data(), sizeof n);
  if (n != files.size()) return std::nullopt;
  for (const std::string& f : files)
    if (!take(bytes, path) || path != f) return std::nullopt;
  std::vector<Rule> rules;
  std::vector<RuleFileInfo> infos;
  if (!decode_rules(bytes, rules, infos)) return std::nullopt;
  // Each file's text was stored as its size and hash (text_key): the text is read again.
  for (RuleFileInfo& info : infos) {
    std::string now;
    try {
      now = read_file(info.path);
    } catch (const Error&) {
      return std::nullopt;  // unreadable now: the compiler reports it
    }
    if (text_key(now) != info.text) return std::nullopt;
    info.text = std::move(now);
  }
  return RuleSetBuilder::assemble(std::move(rules), std::move(infos));
}

// At most kMaxFiles cache files: after a write, the least recently written ones beyond that
// go. Every new list of rule paths (a temporary folder each run) makes a file of ~200 KB;
// without a bound the folder would only grow.
constexpr std::size_t kMaxFiles = 32;

void evict_oldest(const std::string& dir, const std::string& keep) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::error_code fe;
    if (!e.is_regular_file(fe) || !is_cache_file(e.path()) || e.path() == fs::path(keep)) continue;
    const fs::file_time_type t = e.last_write_time(fe);
    if (!fe) entries.emplace_back(t, e.path());
  }
  if (entries.size() < kMaxFiles) return;  // with `keep`, at most kMaxFiles
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + kMaxFiles - 1 < entries.size(); ++i) fs::remove(entries[i].second, ec);
}

// Written whole to a file of its own, then renamed over the old one: a reader sees the old
// file or the new one, never a part.
void write_cached(const std::string& dir, const std::string& file, const std::vector<std::string>& files,
                  const RuleSet& set) {
  std::string rest;
  put(rest, build_id());
  const std::uint64_t n = files.size();
  put(rest, std::string_view(reinterpret_cast<const char*>(&n), sizeof n));
  for (const std::string& f : files) put(rest, f);
  std::vector<RuleFileInfo> infos = set.files();
  for (RuleFileInfo& info : infos) info.text = text_key(info.text);
  rest += encode_rules(set.rules(), infos);
  const std::uint64_t sum = hash64(rest);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string tmp = file + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << kMagic;
    out.write(reinterpret_cast<const char*>(&sum), sizeof sum);
    out << rest;
    if (!out.flush()) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return;
  }
  evict_oldest(dir, file);
}

}  // namespace

const std::string& build_id() {
  static const std::string id = [] {
    std::pair<ElfW(Addr), std::string> found{reinterpret_cast<ElfW(Addr)>(&read_build_id), ""};
    dl_iterate_phdr(read_build_id, &found);
    return found.second;
  }();
  return id;
}

std::uint64_t hash64(std::string_view bytes) {
  // 8 bytes a step through a multiply-xorshift mix (wyhash's constants).
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes.size();
  auto mix = [&h](std::uint64_t w) {
    h = (h ^ w) * 0xa0761d6478bd642full;
    h ^= h >> 32;
  };
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, bytes.data() + i, 8);
    mix(w);
  }
  std::uint64_t tail = 0;
  if (i < bytes.size()) std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  mix(tail);
  mix(0xe7037ed1a0b428dbull);
  return h;
}

}  // namespace rules

RuleSet load_rule_files_cached(const std::vector<std::string>& paths) {
  const std::string dir = rules::rule_cache_dir();
  if (dir.empty() || rules::build_id().empty()) return load_rule_files(paths);
  std::vector<std::string> files;
  try {
    files = rules::expand_rule_paths(paths);
  } catch (const Error&) {
    return load_rule_files(paths);  // the error as the loader reports it
  }
  const std::string file = rules::cache_file(dir, files);
  // Mapped, not read: its pages come in one call rather than a fault each.
  if (std::optional<textio::MappedFile> bytes = textio::MappedFile::open(file, 0))
    if (std::optional<RuleSet> set = rules::read_cached(bytes->text(), files)) return std::move(*set);
  RuleSet set = load_rule_files(paths);
  rules::write_cached(dir, file, files, set);
  return set;
}

}  // namespace graphfuse
