#!/usr/bin/env bash
# Runs one fuzz target built by fuzz/build.sh for SECONDS on its corpus.
#   fuzz/run.sh DIR TARGET SECONDS [WORK] [libFuzzer options...]
# DIR: the fuzz build folder; TARGET: rules, graph_text, graph_yaml, graph_json, graph_gfb, onnx,
# onnx_external, apply, graphdef, tfjs. The shipped corpus fuzz/corpus/TARGET (seeds and regression inputs) is read, never
# written: new inputs go to WORK (default DIR/work/TARGET, emptied first), crash, timeout and
# OOM inputs to DIR/artifacts/TARGET/ (or -artifact_prefix=...). Each input may take 5 s
# (-timeout=5) and 2 GB (-rss_limit_mb). Exit 0 when nothing was found, 77 when the target
# was not built (no clang: skipped), libFuzzer's status otherwise.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(cd "$1" && pwd) target=$2 seconds=$3
shift 3
work=$dir/work/$target
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then work=$1; shift; else rm -rf "$work"; fi
bin=$dir/fuzz_$target
[ -x "$bin" ] || { echo "fuzz: $bin not built (fuzz/build.sh): skipped"; exit 77; }
corpus=$src/fuzz/corpus/$target
[ -d "$corpus" ] || { echo "fuzz: no corpus $corpus"; exit 1; }
mkdir -p "$work" "$dir/artifacts/$target"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Kernels (constant folding in the apply target) refuse tensors over this many bytes with an
# Error; below -rss_limit_mb, so a huge declared shape is a clean rejection, not an OOM report.
export GRAPHFUSE_MAX_TENSOR_BYTES=${GRAPHFUSE_MAX_TENSOR_BYTES:-268435456}
cd "$src"  # rule files `include:` relative paths; keep them inside the tree
exec "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$dir/artifacts/$target/" "$@" "$work" "$corpus"
