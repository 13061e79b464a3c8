// oneDNN engine, per-thread streams, and the activation -> post-op mapping.
#include "fast/dnnl_common.h"

#include <dlfcn.h>

#include <vector>

namespace graphfuse::kernels::fast {

dnnl::engine& cpu_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

dnnl::stream& cpu_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

int omp_threads() {
  // Looked up at run time: oneDNN brings libgomp, we do not compile with -fopenmp.
  using GetFn = int (*)();
  static const auto get = reinterpret_cast<GetFn>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  return get ? get() : 1;
}

dnnl::memory reordered_weights(const dnnl::memory& user, const dnnl::memory::desc& target,
                               const std::shared_ptr<const void>& owner) {
  struct Entry {
    std::weak_ptr<const void> owner;
    dnnl::memory::desc desc;
    dnnl::memory mem;
  };
  static std::mutex mu;
  static std::unordered_map<const void*, std::vector<Entry>> cache;
  const void* key = user.get_data_handle();
  if (owner) {
    std::lock_guard<std::mutex> lock(mu);
    auto& list = cache[key];
    // Drop copies whose owner died (its address may now hold other weights).
    std::erase_if(list, [](const Entry& e) { return e.owner.expired(); });
    for (const Entry& e : list)
      if (e.desc == target && e.owner.lock() == owner) return e.mem;
  }
  dnnl::memory out(target, cpu_engine());
  dnnl::reorder(user, out).execute(cpu_stream(), const_cast<dnnl::memory&>(user), out);
  cpu_stream().wait();
  if (owner) {
    std::lock_guard<std::mutex> lock(mu);
    // Sweep copies of weights whose graphs are gone (a few hundred entries at most), so a
    // process that runs many graphs does not keep their reordered weights alive.
    for (auto it = cache.begin(); it != cache.end();) {
      std::erase_if(it->second, [](const Entry& e) { return e.owner.expired(); });
      it = it->second.empty() ? cache.erase(it) : std::next(it);
    }
    cache[key].push_back({owner, target, out});
  }
  return out;
}

dnnl::primitive_attr runtime_source_zero_point() {
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  return attr;
}

bool has_vnni() {
  using I = dnnl::cpu_isa;
  const I isa = dnnl::get_effective_cpu_isa();
  return isa == I::avx2_vnni || isa == I::avx512_core_vnni || isa == I::avx512_core_bf16 || isa == I::avx512_core_amx;
}

void append_activation(dnnl::post_ops& po, const ActivationSpec& act) {
  using A = dnnl::algorithm;
  switch (act.kind) {
    case Activation::None: return;
    case Activation::Relu: po.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f); return;
    // oneDNN's relu alpha is the negative slope.
    case Activation::LeakyRelu: po.append_eltwise(1.0f, A::eltwise_relu, act.alpha, 0.0f); return;
    case Activation::Clip: po.append_eltwise(1.0f, A::eltwise_clip, act.alpha, act.beta); return;
    case Activation::Sigmoid: po.append_eltwise(1.0f, A::eltwise_logistic, 0.0f, 0.0f); return;
    case Activation::Tanh: po.append_eltwise(1.0f, A::eltwise_tanh, 0.0f, 0.0f); return;
    case Activation::HardSwish: po.append_eltwise(1.0f, A::eltwise_hardswish, 0.0f, 0.0f); return;
    case Activation::HardSigmoid:
      // oneDNN 2.6 has no hardsigmoid: alpha*x + beta, then clip to [0, 1].
      po.append_eltwise(1.0f, A::eltwise_linear, act.alpha, act.beta);
      po.append_eltwise(1.0f, A::eltwise_clip, 0.0f, 1.0f);
      return;
  }
}

}  // namespace graphfuse::kernels::fast
