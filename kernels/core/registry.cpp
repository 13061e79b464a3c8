// The kernel registry and run_op (the two kernel sets are assembled in kernels/sets/).
#include <algorithm>
#include <exception>
#include <new>

#include "core/op_checks.h"
#include "core/util.h"

namespace graphfuse::kernels {

std::string_view kernel_set_name(KernelSet s) {
  return s == KernelSet::Fast ? "fast" : "reference";
}

KernelSet kernel_set_from_name(std::string_view name) {
  if (name == "reference" || name == "ref") return KernelSet::Reference;
  if (name == "fast") return KernelSet::Fast;
  fail("unknown kernel set '" + std::string(name) + "' (expected reference or fast)");
}

const Tensor& KernelCall::required(std::size_t i) const {
  const Tensor* t = input(i);
  check(t != nullptr, "missing input " + std::to_string(i));
  return *t;
}

void KernelRegistry::add(std::string op, KernelFn fn, LayoutSupport support) {
  // Every kernel is stored behind its op's preflight checks, so the executor, run_op,
  // constant folding and kernels delegating to another op's kernel all validate shapes
  // and attributes before the kernel computes with them. Whatever a kernel or a library
  // under it throws (oneDNN's dnnl::error, std::bad_alloc, std::out_of_range) leaves as
  // graphfuse::Error, the one exception the executor and folder are written for.
  const OpContract* contract = contract_for(op);
  KernelFn checked = [fn = std::move(fn), contract](const KernelCall& c) -> std::vector<Tensor> {
    preflight(c, contract);
    try {
      return fn(c);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      fail("out of memory (std::bad_alloc) computing the outputs");
    } catch (const std::exception& e) {
      fail(std::string("internal error: ") + e.what());
    }
  };
  map_[std::move(op)] = Entry{std::move(checked), support, ++calls_, EpilogueSupport::None};
}

const KernelFn* KernelRegistry::find(std::string_view op) const {
  auto it = map_.find(op);
  return it == map_.end() ? nullptr : &it->second.fn;
}

LayoutSupport KernelRegistry::layout_support(std::string_view op) const {
  auto it = map_.find(op);
  return it == map_.end() ? LayoutSupport::PlainOnly : it->second.support;
}

void KernelRegistry::set_epilogue_support(std::string_view op, EpilogueSupport support) {
  auto it = map_.find(op);
  if (it == map_.end()) fail("no kernel for op '" + std::string(op) + "' to declare epilogues for");
  it->second.epilogue = support;
}

EpilogueSupport KernelRegistry::epilogue_support(std::string_view op) const {
  auto it = map_.find(op);
  return it == map_.end() ? EpilogueSupport::None : it->second.epilogue;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : map_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> KernelRegistry::ops_added_after(std::size_t calls) const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : map_)
    if (entry.call > calls) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Tensor> run_op(KernelSet set, std::string_view op, const std::vector<Tensor>& inputs,
                           const Attributes& attrs, std::size_t num_outputs) {
  const KernelFn* fn = registry(set).find(op);
  if (!fn) fail("no kernel for op '" + std::string(op) + "'");
  KernelCall call(op, op, attrs, num_outputs);
  for (const auto& t : inputs) call.inputs.push_back(t.dtype == DType::Undefined ? nullptr : &t);
  try {
    return (*fn)(call);
  } catch (const Error& e) {
    throw Error("op '" + std::string(op) + "': " + e.message());
  }
}

}  // namespace graphfuse::kernels
