// Which instruction set oneDNN runs on, and which oneDNN implementations the fast kernels chose.
#pragma once

#include <string>
#include <vector>

namespace graphfuse::kernels {

/// The instruction set oneDNN's kernels use in this process, in oneDNN's own words
/// ("Intel AVX2", "Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions"), with
/// the ONEDNN_MAX_CPU_ISA restriction and the CPU's own best set when they differ, e.g.
/// "Intel AVX2 (ONEDNN_MAX_CPU_ISA=AVX2; the CPU has AVX-512)". A published figure
/// names its machine with this line.
std::string onednn_isa();

/// One oneDNN primitive the fast kernels built: its kind ("convolution", "matmul",
/// "pooling"), oneDNN's implementation name ("jit:avx2", "brgconv:avx512_core", "ref:any")
/// and the shape in oneDNN's verbose notation.
struct PrimitiveRecord {
  std::string primitive;
  std::string impl;
  std::string shape;
};

/// Every convolution, matmul and pooling primitive built so far in this process (one per
/// cached shape), in build order.
std::vector<PrimitiveRecord> built_primitives();

/// A node that ran on a oneDNN reference implementation because no optimized one took
/// its shape in any layout the fast kernels tried.
struct ReferenceFallback {
  std::string node;  ///< the node id, empty when called outside the executor
  std::string op;
  PrimitiveRecord primitive;
};

/// Each node that ran on a reference implementation, once, in first-use order (for
/// `graphfuse run`'s warning). Kept for the life of the process.
std::vector<ReferenceFallback> reference_fallbacks();

/// True for oneDNN's reference implementations ("ref:any", "ref:..."): plain loops, one
/// to three orders of magnitude slower than the jit kernels.
bool is_reference_impl(const std::string& impl);

}  // namespace graphfuse::kernels
