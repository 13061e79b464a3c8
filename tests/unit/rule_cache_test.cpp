// The rule cache (engine/rules/rule_cache.h, rule_codec.h): compiled rules read back are
// the rules compiled, and a cache file is used only while it still describes the files.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unistd.h>

#include "graphfuse/rules.h"
#include "match/program.h"
#include "rules/rule_cache.h"
#include "rules/rule_codec.h"

namespace fs = std::filesystem;
namespace gf = graphfuse;
namespace gr = graphfuse::rules;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string encoded(const gf::RuleSet& s) { return gr::encode_rules(s.rules(), s.files()); }

// Every rule's listing, label and root ops, the way tools show a rule set.
std::string listing(const gf::RuleSet& s) {
  std::string out;
  for (const gf::Rule& r : s.rules()) {
    out += r.label() + " " + std::to_string(r.priority) + " " + std::to_string(r.depth) + "\n";
    for (gf::OpType op : r.root_ops) out.append(op.name()).append(" ");
    out += gf::match::disassemble(r.compiled->match);
  }
  for (const gf::RuleFileInfo& f : s.files()) out += f.path + " " + std::to_string(f.tests_line) + "\n";
  return out;
}

// XDG_CACHE_HOME pointed at a fresh folder for one test.
class CacheHome {
 public:
  CacheHome() : dir_(fs::temp_directory_path() / ("gf_rule_cache_" + std::to_string(::getpid()))) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (const char* old = std::getenv("XDG_CACHE_HOME")) old_ = old;
    setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
    unsetenv("GRAPHFUSE_RULE_CACHE");
  }
  ~CacheHome() {
    if (old_) setenv("XDG_CACHE_HOME", old_->c_str(), 1);
    else unsetenv("XDG_CACHE_HOME");
    fs::remove_all(dir_);
  }
  const fs::path& dir() const { return dir_; }
  std::vector<fs::path> files() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_ / "graphfuse"))
      for (const auto& e : fs::directory_iterator(dir_ / "graphfuse")) out.push_back(e.path());
    return out;
  }

 private:
  fs::path dir_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(RuleCache, EveryShippedRuleSetReadsBackAsCompiled) {
  for (const char* set : {"/rules/onnx", "/rules/tf", "/rules/seed.yaml"}) {
    const gf::RuleSet compiled = gf::load_rule_files({std::string(GRAPHFUSE_SOURCE_DIR) + set});
    const std::string bytes = encoded(compiled);
    std::vector<gf::Rule> rules;
    std::vector<gf::RuleFileInfo> files;
    ASSERT_TRUE(gr::decode_rules(bytes, rules, files)) << set;
    ASSERT_EQ(rules.size(), compiled.size()) << set;
    EXPECT_EQ(gr::encode_rules(rules, files), bytes) << set;
    for (std::size_t i = 0; i < rules.size(); ++i)
      EXPECT_EQ(gf::match::disassemble(rules[i].compiled->match), gf::match::disassemble(compiled[i].compiled->match))
          << rules[i].label();
    // Truncated or extended bytes are refused, never half read.
    EXPECT_FALSE(gr::decode_rules(std::string_view(bytes).substr(0, bytes.size() / 2), rules, files)) << set;
    EXPECT_FALSE(gr::decode_rules(bytes + "x", rules, files)) << set;
  }
}

TEST(RuleCache, SecondLoadReadsTheCacheAndAnEditedFileIsCompiledAgain) {
  CacheHome home;
  const fs::path rules = home.dir() / "r.yaml";
  const std::string text = read(std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml");
  write(rules, text);

  const gf::RuleSet first = gf::load_rule_files_cached({rules.string()});
  ASSERT_EQ(home.files().size(), 1u);
  const fs::path cache = home.files()[0];
  const auto written = fs::last_write_time(cache);
  const gf::RuleSet second = gf::load_rule_files_cached({rules.string()});
  EXPECT_EQ(fs::last_write_time(cache), written);  // read, not rewritten
  EXPECT_EQ(listing(second), listing(first));
  EXPECT_EQ(listing(second), listing(gf::load_rule_files({rules.string()})));
  EXPECT_EQ(second.files()[0].text, text);

  // The same length, another rule name: compiled again, and the cache replaced.
  std::string edited = text;
  const std::size_t at = edited.find("conv2d_biasadd_relu");
  ASSERT_NE(at, std::string::npos);
  edited[at] = 'k';
  write(rules, edited);
  const gf::RuleSet third = gf::load_rule_files_cached({rules.string()});
  EXPECT_NE(third.find("konv2d_biasadd_relu"), nullptr);
  EXPECT_EQ(listing(third), listing(gf::load_rule_files({rules.string()})));

  // A damaged cache file is compiled around and replaced.
  const std::string good = read(cache);
  write(cache, good.substr(0, good.size() - 7));
  EXPECT_EQ(listing(gf::load_rule_files_cached({rules.string()})), listing(third));
  EXPECT_EQ(read(cache), good);
}

TEST(RuleCache, ErrorsAreTheCompilersAndOffWritesNothing) {
  CacheHome home;
  const fs::path rules = home.dir() / "bad.yaml";
  write(rules, "rules:\n  - name: r\n    pattern: Relu(x)\n    rewrite: Nope(\n");
  std::string cached, compiled;
  try {
    gf::load_rule_files_cached({rules.string()});
  } catch (const gf::Error& e) {
    cached = e.what();
  }
  try {
    gf::load_rule_files({rules.string()});
  } catch (const gf::Error& e) {
    compiled = e.what();
  }
  EXPECT_FALSE(compiled.empty());
  EXPECT_EQ(cached, compiled);
  EXPECT_TRUE(home.files().empty());

  write(rules, read(std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml"));
  setenv("GRAPHFUSE_RULE_CACHE", "off", 1);
  gf::load_rule_files_cached({rules.string()});
  unsetenv("GRAPHFUSE_RULE_CACHE");
  EXPECT_TRUE(home.files().empty());
}

// Every new list of rule paths makes a cache file: the folder keeps the 32 most recently
// written and leaves anything that is not a cache file alone.
TEST(RuleCache, TheFolderKeepsAtMost32Files) {
  CacheHome home;
  const std::string text = read(std::string(GRAPHFUSE_SOURCE_DIR) + "/rules/seed.yaml");
  fs::create_directories(home.dir() / "graphfuse");
  write(home.dir() / "graphfuse" / "notes.txt", "not a cache file");
  for (int i = 0; i < 40; ++i) {
    const fs::path rules = home.dir() / ("r" + std::to_string(i) + ".yaml");
    write(rules, text);
    gf::load_rule_files_cached({rules.string()});
  }
  std::size_t cache_files = 0;
  for (const fs::path& p : home.files()) cache_files += p.extension() == ".bin";
  EXPECT_EQ(cache_files, 32u);
  EXPECT_TRUE(fs::exists(home.dir() / "graphfuse" / "notes.txt"));
  // The last one written is among those kept: its second load reads it back.
  const fs::path last = home.dir() / "r39.yaml";
  std::vector<fs::path> before = home.files();
  gf::load_rule_files_cached({last.string()});
  EXPECT_EQ(home.files(), before);
}
