// oneDNN engine, per-thread streams, and the activation -> post-op mapping.
#include "fast/dnnl_common.h"

#include <dlfcn.h>

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
