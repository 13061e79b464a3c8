#!/usr/bin/env bash
# Runs the kernel and model benchmarks and ONNX Runtime on the same models, in one go.
#   bench/run_benchmarks.sh [BUILD_DIR]      (default build-kernels; run from the repo root)
# Needs: BUILD_DIR/bench/{kernel_bench,model_bench}; ../shared/models; optionally
# tests/ort/node_modules (tests/ort/install.sh) for the ONNX Runtime column.
set -euo pipefail
build="${1:-build-kernels}"
models="../shared/models"
# How idle OpenMP threads wait is fixed when libgomp loads: leave it to the caller
# (active: dedicated machine; passive: a machine shared with other jobs).
echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-<unset: libgomp default>}"
# The shipped ONNX rules when they load, else the bench's own conv fusions; BENCH_RULES
# (space-separated files) overrides both.
fallback=(bench/rules/onnx_conv_fusion.yaml)
if [ -n "${BENCH_RULES:-}" ]; then read -r -a rules <<<"$BENCH_RULES"
elif compgen -G "rules/onnx/*.yaml" >/dev/null; then rules=(rules/onnx/*.yaml)
else rules=("${fallback[@]}"); fi

echo "== kernels: Conv+Bias+ReLU fused vs unfused"
"$build/bench/kernel_bench" --seconds "${BENCH_SECONDS:-1.5}"

for m in resnet18 mobilenet_v2; do
  for t in 1 2; do
    echo
    echo "== $m, $t thread(s), rules: ${rules[*]}"
    rule_args=()
    for r in "${rules[@]}"; do rule_args+=(--rules "$r"); done
    if ! out="$("$build/bench/model_bench" "$models/$m.onnx" --runs "${BENCH_RUNS:-30}" --threads "$t" "${rule_args[@]}" 2>&1)"; then
      echo "$out" | tail -1
      echo "(those rules do not load; using ${fallback[*]})"
      rules=("${fallback[@]}")
      rule_args=(--rules "${fallback[0]}")
      out="$("$build/bench/model_bench" "$models/$m.onnx" --runs "${BENCH_RUNS:-30}" --threads "$t" "${rule_args[@]}")"
    fi
    echo "$out" | grep -v '^         '
    after="$(echo "$out" | awk '/^after/ {print $3}')"
    if [ -d tests/ort/node_modules/onnxruntime-node ]; then
      ort="$(node tests/ort/run_model.js "$models/$m.onnx" --threads "$t" --bench "${BENCH_RUNS:-30}" 2>/dev/null |
             sed -n 's/.*run \([0-9.]*\) ms).*/\1/p')"
      awk -v a="$after" -v o="$ort" 'BEGIN { printf "onnxruntime median %.3f ms; graphfuse after fusion / ORT = %.2fx\n", o, a / o }'
    else
      echo "onnxruntime: not installed (tests/ort/install.sh)"
    fi
  done
done
