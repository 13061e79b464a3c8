// docs/rules.md cannot rot: every ```yaml example in it must appear verbatim (up to
// indentation) in a tested rule file: tests/rules/docs_*.yaml or a file under rules/.
#include "test_paths.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace std::string_literals;
namespace fs = std::filesystem;

namespace {

const fs::path kRoot = GRAPHFUSE_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> yaml_blocks(const std::string& md) {
  std::vector<std::string> out;
  std::istringstream in(md);
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```yaml") {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      out.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  return out;
}

// The block with every line shifted right by `k` spaces (blank lines stay blank).
std::string indented(const std::string& block, std::size_t k) {
  std::string out;
  std::istringstream in(block);
  for (std::string line; std::getline(in, line);) out += (line.empty() ? "" : std::string(k, ' ') + line) + "\n";
  return out;
}

}  // namespace

TEST(LangDocs, EveryYamlExampleIsATestedRuleFile) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kRoot / "tests" / "rules"))
    if (e.path().filename().string().rfind("docs_", 0) == 0 && e.path().extension() == ".yaml")
      files.push_back(read(e.path()));
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "rules"))
    if (e.path().extension() == ".yaml") files.push_back(read(e.path()));
  std::vector<std::string> blocks = yaml_blocks(read(kRoot / "docs" / "rules.md"));
  ASSERT_GE(blocks.size(), 20u);
  std::size_t rules = 0;
  for (const std::string& b : blocks) {
    bool found = false;
    for (std::size_t k = 0; k <= 8 && !found; k += 2)
      for (const std::string& f : files) found = found || f.find(indented(b, k)) != std::string::npos;
    EXPECT_TRUE(found) << "docs/rules.md example not found in tests/rules/docs_*.yaml or rules/:\n" << b;
    rules += b.find("- name: ") != std::string::npos;
  }
  EXPECT_GE(rules, 20u);
}
