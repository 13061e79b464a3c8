// libFuzzer target: ONNX models read from files (load_onnx: the mapped model, the wire
// reader that leaves big raw_data in the file, external data files) and written back in
// every --external-data mode. The input is either a model file's bytes (first byte even)
// or a recipe (first byte odd): initializers whose external-data location, offset and
// length come from the input (past the end, negative, overlapping, `../`, absolute, the
// model itself, a folder, not numbers), big inline raw_data, and a data file of a length
// the input chooses, often shorter than the offsets claim.
//
// Findings, besides fuzz_common.h's: a model that loads must save in each mode and load
// again with the same tensor bytes; a save that fails must leave the output file as it was.
#include <fuzzer/FuzzedDataProvider.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "graphfuse/onnx.h"

namespace {

namespace fs = std::filesystem;

const fs::path& work_dir() {
  static const fs::path d = [] {
    fs::path p = fs::path(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") /
                 ("graphfuse-fuzz-external-" + std::to_string(getpid()));
    fs::create_directories(p / "in" / "sub");
    fs::create_directories(p / "in" / "folder.data");
    return p;
  }();
  return d;
}

void write(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string pick_number(FuzzedDataProvider& in, std::uint64_t file_size) {
  switch (in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: return "0";
    case 1: return std::to_string(file_size);
    case 2: return std::to_string(file_size + 1);
    case 3: return "-" + std::to_string(in.ConsumeIntegralInRange<int>(1, 100));
    case 4: return "18446744073709551616";
    case 5: return "9223372036854775807";
    case 6: return in.ConsumeRandomLengthString(12);
    default: return std::to_string(in.ConsumeIntegralInRange<std::uint32_t>(0, 70000));
  }
}

std::string pick_location(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 11)) {
    case 0: return "../in/w.data";
    case 1: return "/etc/hostname";
    case 2: return "sub/../w.data";
    case 3: return "m.onnx";
    case 4: return "folder.data";
    case 5: return "missing.data";
    case 6: return "sub/w2.data";
    case 7: return "";
    case 8: return in.ConsumeRandomLengthString(16);
    default: return "w.data";
  }
}

// A MatMul chain over initializers of [rows, rows] float32 (rows from the input), each
// external, inline (raw_data, big enough for the wire reader to leave it in the file) or
// given as float_data.
std::string recipe_model(FuzzedDataProvider& in, const fs::path& dir) {
  const std::uint64_t data_size = in.ConsumeIntegralInRange<std::uint64_t>(0, 70000);
  std::string data(static_cast<std::size_t>(data_size), '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  write(dir / "w.data", data);
  write(dir / "sub" / "w2.data", data.substr(0, data.size() / 2));
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("fuzz");
  const int rows = in.ConsumeBool() ? 4 : 32;  // 32 x 32 float32 = 4096 bytes: left in the file
  auto* x = g.add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  for (int d : {1, rows}) x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  std::string prev = "x";
  const int n = in.ConsumeIntegralInRange<int>(1, 4);
  for (int i = 0; i < n; ++i) {
    onnx::TensorProto& t = *g.add_initializer();
    t.set_name("w" + std::to_string(i));
    t.set_data_type(1);
    t.add_dims(rows);
    t.add_dims(rows);
    const std::size_t bytes = static_cast<std::size_t>(rows) * rows * 4;
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: {  // inline raw_data, sometimes of the wrong length
        std::size_t len = in.ConsumeBool() ? bytes : in.ConsumeIntegralInRange<std::size_t>(0, 2 * bytes);
        t.set_raw_data(std::string(len, static_cast<char>(i + 1)));
        break;
      }
      case 1:
        for (std::size_t k = 0; k < bytes / 4; ++k) t.add_float_data(static_cast<float>(k));
        break;
      default: {
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        const int keys = in.ConsumeIntegralInRange<int>(0, 4);
        for (int k = 0; k < keys; ++k) {
          auto* kv = t.add_external_data();
          switch (in.ConsumeIntegralInRange<int>(0, 3)) {
            case 0: kv->set_key("location"), kv->set_value(pick_location(in)); break;
            case 1: kv->set_key("offset"), kv->set_value(pick_number(in, data_size)); break;
            case 2: kv->set_key("length"), kv->set_value(in.ConsumeBool() ? std::to_string(bytes) : pick_number(in, data_size)); break;
            default: kv->set_key(in.ConsumeRandomLengthString(8)), kv->set_value(in.ConsumeRandomLengthString(8)); break;
          }
        }
        break;
      }
    }
    auto* node = g.add_node();
    node->set_op_type("MatMul");
    node->add_input(prev);
    node->add_input(t.name());
    prev = "y" + std::to_string(i);
    node->add_output(prev);
  }
  auto* y = g.add_output();
  y->set_name(prev);
  y->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  return m.SerializeAsString();
}

// The tensors' bytes by node id, to compare a saved-and-loaded model with the loaded one.
std::vector<std::pair<std::string, std::string>> tensors(const graphfuse::Graph& g) {
  std::vector<std::pair<std::string, std::string>> out;
  for (graphfuse::NodeId n : g.nodes())
    if (const auto* t = g.node(n).attrs.get_if<graphfuse::Tensor>("value"))
      out.emplace_back(g.node(n).id, std::string(t->bytes()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path dir = work_dir() / "in";
  FuzzedDataProvider in(data, size);
  const bool recipe = size > 0 && (data[0] & 1);
  if (recipe) {
    in.ConsumeIntegral<std::uint8_t>();
    write(dir / "m.onnx", recipe_model(in, dir));
  } else {
    write(dir / "m.onnx", std::string(fuzz::bytes(data, size)));
  }
  graphfuse::Graph g;
  if (!fuzz::guarded("load_onnx", [&] { g = graphfuse::load_onnx((dir / "m.onnx").string()); })) return 0;
  fuzz::check_graph(g);
  const auto before = tensors(g);
  for (const char* mode : {"same", "external", "inline"}) {
    const fs::path out = dir / "o.onnx";
    const std::string old = "not overwritten by a failed save";
    write(out, old);
    graphfuse::OnnxSaveOptions options;
    options.external_data = mode;
    options.external_threshold = 64;
    if (!fuzz::guarded("save_onnx", [&] { graphfuse::save_onnx(g, out.string(), options); })) {
      if (read(out) != old) fuzz::finding(std::string("a failed save (") + mode + ") changed the output file");
      continue;
    }
    graphfuse::Graph back;
    try {
      back = graphfuse::load_onnx(out.string());
    } catch (const std::exception& e) {
      fuzz::finding(std::string("a model saved with --external-data ") + mode + " does not load again", e.what());
    }
    if (tensors(back) != before)
      fuzz::finding(std::string("tensor bytes differ after a save with --external-data ") + mode);
  }
  return 0;
}
