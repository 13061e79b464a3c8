#!/usr/bin/env bash
# Runs the kernel and model benchmarks and ONNX Runtime on the same models, in one go.
#   bench/run_benchmarks.sh [BUILD_DIR]      (default build-kernels; run from the repo root)
# Environment: BENCH_RUNS (runs per median, 30), BENCH_REPEAT (medians per model, 3),
# BENCH_MODELS ("resnet18 mobilenet_v2"), BENCH_KERNELS=0 (skip kernel_bench),
# BENCH_SECONDS (kernel_bench time per case, 1.5), BENCH_RULES (rule files),
# ONEDNN_MAX_CPU_ISA (e.g. AVX2: graphfuse as an AVX2-only CPU runs it; then no ORT column).
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

if [ "${BENCH_KERNELS:-1}" != 0 ]; then
  echo "== kernels: Conv+Bias+ReLU fused vs unfused"
  "$build/bench/kernel_bench" --seconds "${BENCH_SECONDS:-1.5}"
fi

# Each (model, threads) pair is measured BENCH_REPEAT times, graphfuse and ONNX Runtime
# alternating so that background load hits both alike; the figures are the median (and
# range) of those per-repeat medians.
repeat="${BENCH_REPEAT:-3}"
have_ort=false ort_why="not installed (tests/ort/install.sh)"
[ -d tests/ort/node_modules/onnxruntime-node ] && have_ort=true
# ONNX Runtime cannot be held to oneDNN's ISA limit: a restricted run has no ORT column, so
# no figure compares an AVX2 graphfuse with an AVX-512 ONNX Runtime.
if [ -n "${ONEDNN_MAX_CPU_ISA:-}" ] && $have_ort; then
  echo "ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA: no ONNX Runtime column (it cannot be restricted the same way)"
  have_ort=false ort_why="not run (ONEDNN_MAX_CPU_ISA is set)"
fi
# "median min max" of the numbers on stdin.
stats() { sort -g | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.3f %.3f %.3f\n", m, v[1], v[NR]}'; }

for m in ${BENCH_MODELS:-resnet18 mobilenet_v2}; do
  for t in 1 2; do
    echo
    echo "== $m, $t thread(s), rules: ${rules[*]}"
    rule_args=()
    for r in "${rules[@]}"; do rule_args+=(--rules "$r"); done
    befores=() afters=() orts=()
    for ((i = 1; i <= repeat; i++)); do
      if ! out="$("$build/bench/model_bench" "$models/$m.onnx" --runs "${BENCH_RUNS:-30}" --threads "$t" "${rule_args[@]}" 2>&1)"; then
        echo "$out" | tail -1
        echo "(those rules do not load; using ${fallback[*]})"
        rules=("${fallback[@]}")
        rule_args=(--rules "${fallback[0]}")
        out="$("$build/bench/model_bench" "$models/$m.onnx" --runs "${BENCH_RUNS:-30}" --threads "$t" "${rule_args[@]}")"
      fi
      [ "$i" = 1 ] && echo "$out" | grep -v '^         '
      befores+=("$(echo "$out" | awk '/^before/ {print $3}')")
      afters+=("$(echo "$out" | awk '/^after/ {print $3}')")
      if $have_ort; then
        orts+=("$(node tests/ort/run_model.js "$models/$m.onnx" --threads "$t" --bench "${BENCH_RUNS:-30}" 2>/dev/null |
                  sed -n 's/.*run \([0-9.]*\) ms).*/\1/p')")
      fi
    done
    read -r b bmin bmax < <(printf '%s\n' "${befores[@]}" | stats)
    read -r a amin amax < <(printf '%s\n' "${afters[@]}" | stats)
    echo "repeats  $repeat: unfused $b ms ($bmin..$bmax), fused $a ms ($amin..$amax)"
    if $have_ort; then
      read -r o omin omax < <(printf '%s\n' "${orts[@]}" | stats)
      awk -v a="$a" -v o="$o" -v lo="$omin" -v hi="$omax" \
        'BEGIN { printf "onnxruntime median %.3f ms (%.3f..%.3f); graphfuse after fusion / ORT = %.2fx\n", o, lo, hi, a / o }'
    else
      echo "onnxruntime: $ort_why"
    fi
  done
done
