// Helpers shared by the kernel implementations.
#include "core/util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace graphfuse::kernels {

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::int64_t checked_numel(const Shape& s, std::string_view what) {
  std::int64_t n = 1;
  for (auto d : s) {
    if (d < 0) fail(std::string(what) + " has a negative dimension in shape " + shape_str(s));
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      fail(std::string(what) + " of shape " + shape_str(s) + " has more elements than int64 can count");
    n *= d;
  }
  return n;
}

std::size_t max_tensor_bytes() {
  static const std::size_t limit = [] {
    if (const char* env = std::getenv("GRAPHFUSE_MAX_TENSOR_BYTES")) {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(env, &end, 10);
      if (end != env && *end == '\0' && v > 0) return static_cast<std::size_t>(v);
    }
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
    return std::size_t{1} << 36;  // 64 GiB when the system will not say
  }();
  return limit;
}

void check_tensor_size(DType dtype, const Shape& shape, std::string_view what) {
  const auto n = static_cast<std::uint64_t>(checked_numel(shape, what));
  const std::uint64_t es = std::max<std::size_t>(dtype_size(dtype), 1);
  const std::uint64_t limit = max_tensor_bytes();
  if (n > limit / es)
    fail(std::string(what) + " of shape " + shape_str(shape) + " would need " +
         (n > std::numeric_limits<std::uint64_t>::max() / es ? std::string("more than 2^64")
                                                               : std::to_string(n * es)) +
         " bytes, over the limit of " + std::to_string(limit) +
         " (physical memory, or GRAPHFUSE_MAX_TENSOR_BYTES)");
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

namespace {
// A new string of `bytes` zeros. Big ones have their pages mapped in one madvise call
// (MADV_POPULATE_WRITE) before the zero-fill first touches them, instead of a page fault
// per 4 KiB (on this VM those faults were three quarters of folding mobilenet_v2's 52
// BatchNormalizations into 14 MB of new weights). Huge pages stay the program's choice
// (reserve_huge_page_heap). The call is advice: a kernel without it (EINVAL) faults the
// pages in as before.
std::string* fresh_zeros(std::size_t bytes) {
  auto* s = new std::string();
#ifdef MADV_POPULATE_WRITE
  if (bytes >= (64u << 10)) {
    s->reserve(bytes);
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto at = reinterpret_cast<std::uintptr_t>(s->data());
    const auto begin = (at + page - 1) / page * page, end = (at + bytes) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }
#endif
  s->resize(bytes);  // value-initialized: a fresh buffer is zeros
  return s;
}

// Recycles large tensor buffers. A fresh multi-megabyte allocation is served by mmap and
// costs a page fault per 4 KiB on first touch (on this VM, more than the convolution
// writing it); a buffer returned by the last Tensor that used it is kept here and handed
// to the next allocation of the same size. Bounded, and leaked on purpose (see the pools
// below) so that Tensors destroyed during static destruction can still return their buffers.
class BufferPool {
 public:
  BufferPool(std::size_t min_bytes, std::size_t max_pooled_bytes, bool zero_on_reuse)
      : min_bytes_(min_bytes), max_pooled_bytes_(max_pooled_bytes), zero_on_reuse_(zero_on_reuse) {}

  /// Below this, malloc is as fast as the pool and the lock would only add contention.
  std::size_t min_bytes() const { return min_bytes_; }

  std::string* take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        std::string* s = it->second.back();
        it->second.pop_back();
        pooled_ -= bytes;
        if (zero_on_reuse_) std::fill(s->begin(), s->end(), '\0');
        return s;
      }
    }
    return fresh_zeros(bytes);
  }
  void give(std::string* s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (pooled_ + s->size() <= max_pooled_bytes_) {
        pooled_ += s->size();
        free_[s->size()].push_back(s);
        return;
      }
    }
    delete s;
  }

 private:
  const std::size_t min_bytes_;
  const std::size_t max_pooled_bytes_;
  const bool zero_on_reuse_;
  std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<std::string*>> free_;
  std::size_t pooled_ = 0;
};

// Zeroed like a fresh buffer: a kernel that misses an element must not show the previous
// run's (plausible) value.
BufferPool& zeroed_pool() {
  static BufferPool* pool = new BufferPool(64 * 1024, std::size_t{1} << 30, true);
  return *pool;
}

// For kernels that write every element: zero-filling a recycled buffer right before the
// kernel overwrites it was ~24 MB of single-threaded memset per mobilenet_v2 run.
BufferPool& unfilled_pool() {
  static BufferPool* pool = new BufferPool(4 * 1024, std::size_t{512} << 20, false);
  return *pool;
}

Tensor pooled_tensor(DType dtype, Shape shape, BufferPool& pool) {
  // Every kernel output and random tensor is allocated here: the one place where a shape
  // from a file turns into bytes, so the one place that bounds it.
  check_tensor_size(dtype, shape, "tensor");
  Tensor t;
  t.dtype = dtype;
  const auto bytes = static_cast<std::size_t>(numel(shape)) * dtype_size(dtype);
  t.shape = std::move(shape);
  // Created non-const so that mut<T>() may write through the const view Tensor keeps.
  if (bytes < pool.min_bytes()) {
    t.data = std::make_shared<std::string>(bytes, '\0');
  } else {
    t.data = std::shared_ptr<std::string>(pool.take(bytes), [p = &pool](std::string* s) { p->give(s); });
  }
  return t;
}
}  // namespace

void batch_norm_factors(const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
                        std::int64_t channels, float* mul, float* add) {
  for (std::int64_t k = 0; k < channels; ++k) {
    mul[k] = scale[k] / std::sqrt(var[k] + epsilon);
    add[k] = bias[k] - mean[k] * mul[k];
  }
}

Tensor alloc(DType dtype, Shape shape) { return pooled_tensor(dtype, std::move(shape), zeroed_pool()); }

Tensor alloc_unfilled(DType dtype, Shape shape) {
  Tensor t = pooled_tensor(dtype, std::move(shape), unfilled_pool());
#ifndef NDEBUG
  // All-ones bytes are NaN as float32: an element a kernel missed shows up in the
  // fast-vs-reference tests instead of a stale, plausible value.
  std::fill(mut<char>(t), mut<char>(t) + t.data->size(), static_cast<char>(0xFF));
#endif
  return t;
}

Tensor reshaped(const Tensor& t, Shape shape) {
  // checked_numel: a shape from a file whose product wraps around to the input's count
  // would make a view claiming more elements than its bytes hold.
  if (checked_numel(shape, "reshaped tensor") != t.num_elements())
    fail("cannot reshape " + shape_str(t.shape) + " to " + shape_str(shape));
  Tensor r = t;
  r.shape = std::move(shape);
  return r;
}

const float* f32(const Tensor& t, std::string_view what) {
  check(t.dtype == DType::Float32, std::string(what) + " must be float32, got " +
                                       std::string(dtype_name(t.dtype)));
  check(t.has_data(), std::string(what) + " has no data");
  check(t.data->size() >= static_cast<std::size_t>(t.num_elements()) * 4,
        std::string(what) + " holds fewer bytes than its shape " + shape_str(t.shape));
  return t.as<float>();
}

std::vector<std::int64_t> int_values(const Tensor& t, std::string_view what) {
  check(t.has_data(), std::string(what) + " has no data");
  const auto n = static_cast<std::size_t>(t.num_elements());
  std::vector<std::int64_t> v(n);
  if (t.dtype == DType::Int64) {
    for (std::size_t i = 0; i < n; ++i) v[i] = t.as<std::int64_t>()[i];
  } else if (t.dtype == DType::Int32) {
    for (std::size_t i = 0; i < n; ++i) v[i] = t.as<std::int32_t>()[i];
  } else {
    fail(std::string(what) + " must be int64 or int32, got " + std::string(dtype_name(t.dtype)));
  }
  return v;
}

float scalar_f32(const Tensor& t, std::string_view what) {
  check(t.num_elements() == 1, std::string(what) + " must have one element, has shape " +
                                   shape_str(t.shape));
  if (t.dtype == DType::Float32) return f32(t, what)[0];
  return static_cast<float>(int_values(t, what)[0]);
}

void fail(const std::string& message) { throw Error(message); }

std::int64_t attr_int(const Attributes& a, std::string_view name, std::int64_t def) {
  const AttrValue* v = a.find(name);
  if (!v) return def;
  if (auto p = std::get_if<std::int64_t>(v)) return *p;
  if (auto p = std::get_if<bool>(v)) return *p ? 1 : 0;
  fail("attribute '" + std::string(name) + "' must be an int, got " +
       std::string(attr_kind_name(*v)));
}

float attr_float(const Attributes& a, std::string_view name, float def) {
  const AttrValue* v = a.find(name);
  if (!v) return def;
  if (auto p = std::get_if<float>(v)) return *p;
  if (auto p = std::get_if<std::int64_t>(v)) return static_cast<float>(*p);
  fail("attribute '" + std::string(name) + "' must be a float, got " +
       std::string(attr_kind_name(*v)));
}

std::string attr_string(const Attributes& a, std::string_view name, std::string_view def) {
  const AttrValue* v = a.find(name);
  if (!v) return std::string(def);
  if (auto p = std::get_if<std::string>(v)) return *p;
  fail("attribute '" + std::string(name) + "' must be a string, got " +
       std::string(attr_kind_name(*v)));
}

std::vector<std::int64_t> attr_ints(const Attributes& a, std::string_view name) {
  const AttrValue* v = a.find(name);
  if (!v) return {};
  if (auto p = std::get_if<std::vector<std::int64_t>>(v)) return *p;
  if (auto p = std::get_if<std::int64_t>(v)) return {*p};
  // An empty YAML list may arrive as any list kind.
  if (auto p = std::get_if<std::vector<float>>(v); p && p->empty()) return {};
  fail("attribute '" + std::string(name) + "' must be a list of ints, got " +
       std::string(attr_kind_name(*v)));
}

std::vector<float> attr_floats(const Attributes& a, std::string_view name) {
  const AttrValue* v = a.find(name);
  if (!v) return {};
  if (auto p = std::get_if<std::vector<float>>(v)) return *p;
  if (auto p = std::get_if<std::vector<std::int64_t>>(v))
    return std::vector<float>(p->begin(), p->end());
  if (auto p = std::get_if<float>(v)) return {*p};
  fail("attribute '" + std::string(name) + "' must be a list of floats, got " +
       std::string(attr_kind_name(*v)));
}

bool has_attr(const Attributes& a, std::string_view name) { return a.has(name); }

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) {
  check(rank > 0, "axis " + std::to_string(axis) + " given for a rank-0 (scalar) input, which has no axis");
  check(axis >= -rank && axis < rank,
        "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    check(da == db || da == 1 || db == 1,
          "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  const std::size_t r = target.size();
  std::vector<std::int64_t> strides(r, 0);
  std::int64_t s = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::size_t i = shape.size() - 1 - k;  // walk from the innermost dim
    const std::size_t t = r - 1 - k;
    strides[t] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
  return strides;
}

}  // namespace graphfuse::kernels
