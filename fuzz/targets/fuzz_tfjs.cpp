// libFuzzer target: TF.js graph models (load_tfjs_model: model.json, its weight manifest,
// the shards, quantization). The input is model.json, then a NUL byte, then the bytes of the
// one shard file a seed may name, "s.bin" (a manifest may also name files that are absent or
// lie about sizes: shards shorter than the manifest says, huge shapes, unknown dtypes). Both
// are written into a folder of this process, since a TF.js model is files. An accepted model
// must validate, be written as a TF.js model that loads again and validates; it is also
// checked in the other formats (fuzz_common.h).
#include <unistd.h>

#include <filesystem>

#include "fuzz_common.h"
#include "graphfuse/tensorflow.h"

namespace {

const std::string& work_dir() {
  static const std::string d = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm/" : "/tmp/";
    std::string dir = base + "graphfuse-fuzz-tfjs-" + std::to_string(getpid());
    std::filesystem::create_directories(dir + "/in");
    std::filesystem::create_directories(dir + "/out");
    return dir;
  }();
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view all = fuzz::bytes(data, size);
  auto nul = all.find('\0');
  std::string_view json = all.substr(0, nul);
  std::string_view shard = nul == std::string_view::npos ? std::string_view{} : all.substr(nul + 1);
  const std::string in = work_dir() + "/in", out = work_dir() + "/out";
  for (const auto& e : std::filesystem::directory_iterator(in)) std::filesystem::remove(e.path());
  graphfuse::write_file_atomic(in + "/model.json", json);
  if (nul != std::string_view::npos) graphfuse::write_file_atomic(in + "/s.bin", shard);
  graphfuse::Graph g;
  if (!fuzz::guarded("load_tfjs_model", [&] { g = graphfuse::load_tfjs_model(in + "/model.json"); })) return 0;
  fuzz::check_graph(g);
  if (!fuzz::roundtrip_on()) return 0;
  for (const auto& e : std::filesystem::directory_iterator(out)) std::filesystem::remove(e.path());
  try {
    graphfuse::save_tfjs_model(g, out + "/model.json");
  } catch (const graphfuse::Error&) {
    return 0;  // a graph TF.js weights cannot hold (refused with a message): not a finding
  }
  try {
    graphfuse::load_tfjs_model(out + "/model.json").validate();
  } catch (const std::exception& e) {
    fuzz::finding("the TF.js writer's output does not load again", e.what());
  }
  return 0;
}
