// TF.js weights: a manifest of groups, each a list of shard files holding its weights one
// after the other (float32, int32, bool as is; uint8/uint16 affine quantization and
// float16 as TF.js's io.decodeWeights reads them).
#include "io/tfjs_weights.h"

#include <cmath>
#include <cstring>
#include <filesystem>

#include "graphfuse/float16.h"
#include "graph/value_checks.h"
#include "graphfuse/io.h"
#include "io/text_values.h"

namespace graphfuse::tf_io {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& msg) { throw Error(SourceLoc{file}, msg); }

const Json& member(const Json& obj, const char* key, const std::string& file, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(file, where + " has no \"" + key + "\"");
  return *it;
}

std::string quant_dtype(const Json& q) {
  auto it = q.find("dtype");
  return it != q.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number(const Json& q, const char* key, const std::string& file, const std::string& where) {
  const Json& v = member(q, key, file, where);
  if (!v.is_number()) fail(file, where + ": \"" + key + "\" is not a number");
  return v.get<double>();
}

}  // namespace

std::vector<TfjsWeight> read_tfjs_weights(const Json& manifest, const std::string& dir, const std::string& file) {
  std::vector<TfjsWeight> out;
  if (manifest.is_null()) return out;
  if (!manifest.is_array()) fail(file, "weightsManifest is not a list");
  for (std::size_t gi = 0; gi < manifest.size(); ++gi) {
    const Json& group = manifest[gi];
    std::string gwhere = "weightsManifest[" + std::to_string(gi) + "]";
    if (!group.is_object()) fail(file, gwhere + " is not an object");
    const Json& paths = member(group, "paths", file, gwhere);
    const Json& weights = member(group, "weights", file, gwhere);
    if (!paths.is_array() || !weights.is_array()) fail(file, gwhere + ": paths and weights must be lists");
    std::string bytes;
    for (const Json& p : paths) {
      if (!p.is_string()) fail(file, gwhere + ": a path is not a string");
      std::string rel = p.get<std::string>();
      if (rel.empty() || std::filesystem::path(rel).is_absolute() || rel.find("..") != std::string::npos)
        fail(file, gwhere + ": shard path '" + rel + "' is not a file name beside model.json");
      bytes += read_file((std::filesystem::path(dir) / rel).string());
    }
    std::size_t offset = 0;
    for (std::size_t wi = 0; wi < weights.size(); ++wi) {
      const Json& w = weights[wi];
      std::string where = gwhere + ".weights[" + std::to_string(wi) + "]";
      if (!w.is_object()) fail(file, where + " is not an object");
      const Json& name = member(w, "name", file, where);
      const Json& shape = member(w, "shape", file, where);
      const Json& dtype = member(w, "dtype", file, where);
      if (!name.is_string() || !dtype.is_string() || !shape.is_array())
        fail(file, where + ": name and dtype must be strings, shape a list");
      TfjsWeight tw;
      tw.name = name.get<std::string>();
      where = "weight '" + tw.name + "'";
      for (const Json& d : shape) {
        if (!d.is_number_integer()) fail(file, where + ": a dimension is not an integer");
        tw.tensor.shape.push_back(d.get<std::int64_t>());
      }
      if (std::string p = checks::tensor_shape_problem(tw.tensor.shape); !p.empty()) fail(file, where + ": " + p);
      auto count = static_cast<std::size_t>(tw.tensor.num_elements());
      std::string dt = dtype.get<std::string>();
      if (dt == "float32") tw.tensor.dtype = DType::Float32;
      else if (dt == "int32") tw.tensor.dtype = DType::Int32;
      else if (dt == "bool") tw.tensor.dtype = DType::Bool;
      else fail(file, where + ": dtype '" + dt + "' (graphfuse reads float32, int32 and bool weights)");
      std::string data(count * dtype_size(tw.tensor.dtype), '\0');
      auto q = w.find("quantization");
      std::size_t stored = dtype_size(tw.tensor.dtype);
      std::string qd;
      if (q != w.end()) {
        if (!q->is_object()) fail(file, where + ": quantization is not an object");
        qd = quant_dtype(*q);
        if (qd == "uint8") stored = 1;
        else if (qd == "uint16" || qd == "float16") stored = 2;
        else fail(file, where + ": quantization dtype '" + qd + "' (TF.js has uint8, uint16 and float16)");
        if (qd == "float16" && tw.tensor.dtype != DType::Float32) fail(file, where + ": float16 quantization of a " + dt + " weight");
        if (tw.tensor.dtype == DType::Bool) fail(file, where + ": a quantized bool weight");
        tw.quantization = q->dump();
      }
      if (count > (bytes.size() - offset) / stored)
        fail(file, where + " needs " + std::to_string(count * stored) + " bytes at offset " + std::to_string(offset) +
                       " of its group's shards, which hold " + std::to_string(bytes.size()));
      const char* src = bytes.data() + offset;
      if (qd.empty()) {
        std::memcpy(data.data(), src, data.size());
      } else if (qd == "float16") {
        for (std::size_t k = 0; k < count; ++k) {
          std::uint16_t h;
          std::memcpy(&h, src + 2 * k, 2);
          float f = half_to_float(h);
          std::memcpy(data.data() + 4 * k, &f, 4);
        }
      } else {
        // value = q * scale + min, computed in double and stored as TF.js stores it.
        double scale = number(*q, "scale", file, where), min = number(*q, "min", file, where);
        for (std::size_t k = 0; k < count; ++k) {
          std::uint32_t v;
          if (stored == 1) {
            v = static_cast<std::uint8_t>(src[k]);
          } else {
            std::uint16_t u;
            std::memcpy(&u, src + 2 * k, 2);
            v = u;
          }
          double x = v * scale + min;
          if (tw.tensor.dtype == DType::Float32) {
            auto f = static_cast<float>(x);
            std::memcpy(data.data() + 4 * k, &f, 4);
          } else {
            auto i = static_cast<std::int32_t>(std::floor(x + 0.5));  // Math.round
            std::memcpy(data.data() + 4 * k, &i, 4);
          }
        }
      }
      offset += count * stored;
      tw.tensor.data = std::make_shared<const std::string>(std::move(data));
      out.push_back(std::move(tw));
    }
  }
  return out;
}

namespace {

void append_weight(std::string& out, const TfjsWeight& w, Json& spec) {
  const Tensor& t = w.tensor;
  auto count = static_cast<std::size_t>(t.num_elements());
  const char* src = t.data->data();
  if (w.quantization.empty()) {
    out.append(src, count * dtype_size(t.dtype));
    return;
  }
  Json q = Json::parse(w.quantization);
  spec["quantization"] = q;
  std::string qd = q.value("dtype", "");
  if (qd == "float16") {
    for (std::size_t k = 0; k < count; ++k) {
      float f;
      std::memcpy(&f, src + 4 * k, 4);
      std::uint16_t h = float_to_half(f);
      out.append(reinterpret_cast<const char*>(&h), 2);
    }
    return;
  }
  // The inverse of the dequantization: an unchanged weight gets its original bytes back.
  double scale = q.value("scale", 1.0), min = q.value("min", 0.0);
  double top = qd == "uint8" ? 255 : 65535;
  for (std::size_t k = 0; k < count; ++k) {
    double x;
    if (t.dtype == DType::Float32) {
      float f;
      std::memcpy(&f, src + 4 * k, 4);
      x = f;
    } else {
      std::int32_t i;
      std::memcpy(&i, src + 4 * k, 4);
      x = i;
    }
    double v = scale != 0 ? std::nearbyint((x - min) / scale) : 0;
    if (!(v >= 0)) v = 0;
    if (v > top) v = top;
    if (qd == "uint8") {
      out.push_back(static_cast<char>(static_cast<std::uint8_t>(v)));
    } else {
      auto u = static_cast<std::uint16_t>(v);
      out.append(reinterpret_cast<const char*>(&u), 2);
    }
  }
}

}  // namespace

Json write_tfjs_weights(const std::vector<TfjsWeight>& weights, const std::string& dir, std::int64_t shard_bytes,
                        const std::vector<std::string>& names) {
  std::string bytes;
  Json specs = Json::array();
  for (const TfjsWeight& w : weights) {
    Json spec = Json::object();
    spec["name"] = w.name;
    spec["shape"] = w.tensor.shape;
    spec["dtype"] = w.tensor.dtype == DType::Float32 ? "float32" : w.tensor.dtype == DType::Int32 ? "int32" : "bool";
    append_weight(bytes, w, spec);
    specs.push_back(std::move(spec));
  }
  auto size = static_cast<std::size_t>(shard_bytes > 0 ? shard_bytes : 4194304);
  std::size_t n = bytes.empty() ? 0 : (bytes.size() + size - 1) / size;
  Json paths = Json::array();
  std::string ext = names.empty() ? ".bin" : std::filesystem::path(names[0]).extension().string();
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = names.size() == n ? names[i]
                                         : "group1-shard" + std::to_string(i + 1) + "of" + std::to_string(n) + ext;
    std::size_t at = i * size;
    write_file_atomic((std::filesystem::path(dir) / name).string(),
                      std::string_view(bytes).substr(at, std::min(size, bytes.size() - at)));
    paths.push_back(name);
  }
  Json group = Json::object();
  group["paths"] = std::move(paths);
  group["weights"] = std::move(specs);
  Json manifest = Json::array();
  if (!weights.empty()) manifest.push_back(std::move(group));
  return manifest;
}

}  // namespace graphfuse::tf_io
