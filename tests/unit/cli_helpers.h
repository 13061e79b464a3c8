// Helpers for the unit tests that run the graphfuse binary: run a command line, read a
// file back, and a fixture that gives each test a fresh temporary folder.
#pragma once

#include "test_paths.h"
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>

namespace graphfuse::testutil {

/// What one run of the binary did.
struct CliRun {
  int code;         ///< exit status; -1 when it did not exit normally
  std::string out;  ///< stdout and stderr together
};

/// Runs `graphfuse ARGS` (the binary this build made) through the shell.
inline CliRun run_cli(const std::string& args) {
  std::string cmd = std::string(GRAPHFUSE_CLI) + " " + args + " 2>&1";
  CliRun r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A whole file as bytes ("" when it is absent).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A path in the source tree (rules/, examples/, tests/rules/ ...).
// input -> Conv2D(3x3, `channels` filters, SAME) -> BiasAdd -> ReLU -> output, as .graph text.
inline std::string conv_chain(int channels) {
  const std::string c = std::to_string(channels);
  return "input x\nw = Const() {shape = [3, 3, 3, " + c + "]}\nb = Const() {shape = [" + c +
         "]}\nconv = Conv2D(x, w) {strides = [1, 1], padding = \"SAME\"}\nbias = BiasAdd(conv, b)\n"
         "relu = ReLU(bias)\noutput relu\n";
}

inline std::string src(const std::string& rel) { return std::string(GRAPHFUSE_SOURCE_DIR) + "/" + rel; }

/// A fixture with its own empty folder `dir_`, named after the suite and the test so that
/// tests run in parallel by ctest never share one; removed when the test ends.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("graphfuse_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
            std::to_string(::getpid()));  // two checkouts' test runs must not share a folder
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// Writes `text` to dir_/name and returns the path (as text, ready for a command line).
  std::string write(const std::string& name, const std::string& text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

}  // namespace graphfuse::testutil
