// Real models from ../shared/models: the executor against PyTorch's reference outputs.
// resnet18 runs by default (fast and reference kernels); GRAPHFUSE_MODEL_TESTS=all adds
// the other models.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "graphfuse/io.h"
#include "graphfuse/onnx.h"
#include "kernels/test_util.h"

namespace {

namespace fs = std::filesystem;

// ctest runs in the repository root; shared/ sits beside it.
const fs::path kModels = "../shared/models";

Tensor read_raw(const fs::path& p, Shape shape) {
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Tensor t;
  t.shape = std::move(shape);
  EXPECT_EQ(bytes.size(), static_cast<std::size_t>(t.num_elements()) * 4) << p;
  t.data = std::make_shared<const std::string>(std::move(bytes));
  return t;
}

struct ModelCase {
  const char* name;
  Shape in, out;
  bool default_run;
};

const ModelCase kCases[] = {
    {"resnet18", {1, 3, 224, 224}, {1, 1000}, true},
    {"mobilenet_v2", {1, 3, 224, 224}, {1, 1000}, false},
    {"mobilenet_v2.raw", {1, 3, 224, 224}, {1, 1000}, false},
    {"squeezenet1_1", {1, 3, 224, 224}, {1, 1000}, false},
    {"transformer_encoder", {1, 128, 256}, {1, 128, 256}, false},
    {"transformer_encoder.opset17", {1, 128, 256}, {1, 128, 256}, false},
};

// gtest prints a parameter with this instead of its bytes.
void PrintTo(const ModelCase& mc, std::ostream* os) { *os << mc.name; }

class ModelTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void check_model(const ModelCase& mc, const fs::path& model);
};

bool all_models() {
  const char* env = std::getenv("GRAPHFUSE_MODEL_TESTS");
  return env && std::string(env) == "all";
}

TEST_P(ModelTest, MatchesPyTorchReference) {
  const ModelCase& mc = GetParam();
  if (!mc.default_run && !all_models()) GTEST_SKIP() << "set GRAPHFUSE_MODEL_TESTS=all to run " << mc.name;
  check_model(mc, kModels / (std::string(mc.name) + ".onnx"));
}

// ONNX Runtime's own fusions (com.microsoft FusedConv, FusedMatMul with transBatch,
// SkipLayerNormalization) run through our kernels must give PyTorch's numbers too: the
// check that our contrib-op semantics are ONNX Runtime's.
TEST_P(ModelTest, OrtOptimizedMatchesPyTorchReference) {
  const ModelCase& mc = GetParam();
  if (!all_models()) GTEST_SKIP() << "set GRAPHFUSE_MODEL_TESTS=all";
  if (!fs::exists("tests/ort/node_modules/onnxruntime-node")) GTEST_SKIP() << "tests/ort/install.sh first";
  const fs::path dir = fs::temp_directory_path() / "graphfuse-kernel-tests";
  fs::create_directories(dir);
  const fs::path out = dir / (std::string(mc.name) + ".ort.onnx");
  const std::string cmd = "node tests/ort/run_model.js " + (kModels / (std::string(mc.name) + ".onnx")).string() +
                          " --level extended --quiet --optimized-out " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  check_model(mc, out);
}

void ModelTest::check_model(const ModelCase& mc, const fs::path& model) {
  if (!fs::exists(model)) GTEST_SKIP() << model << " not found";
  graphfuse::Graph g;
  try {
    g = graphfuse::load_onnx(model.string());
  } catch (const graphfuse::Error& e) {
    if (std::string(e.what()).find("not built yet") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  const Tensor input = read_raw(kModels / "io" / (std::string(mc.name) + ".input0.bin"), mc.in);
  const Tensor expected = read_raw(kModels / "io" / (std::string(mc.name) + ".ref0.bin"), mc.out);
  // atol scaled to the output's magnitude: logits of random-weight nets near zero are
  // judged absolutely, the rest relatively.
  double scale = 0;
  for (float v : values(expected)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (auto set : {gk::KernelSet::Fast, gk::KernelSet::Reference}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = gk::run_graph(g, {input}, {set, 2, 0, {}});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(out.size(), 1u);
    auto d = gk::compare_outputs(out, {expected}, 1e-4, 1e-4 * scale);
    EXPECT_TRUE(d[0].pass) << mc.name << " " << gk::kernel_set_name(set) << " max_abs=" << d[0].max_abs
                           << " max_rel=" << d[0].max_rel << " (output scale " << scale << ")";
    std::cout << "[ model    ] " << mc.name << " " << gk::kernel_set_name(set) << ": " << s
              << " s, max_abs " << d[0].max_abs << ", max_rel " << d[0].max_rel << "\n";
    if (set == gk::KernelSet::Reference) {
      EXPECT_LT(s, 60.0) << "reference executor too slow";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ModelTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& c : n)
                             if (c == '.') c = '_';
                           return n;
                         });

}  // namespace
