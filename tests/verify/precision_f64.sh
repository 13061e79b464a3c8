#!/usr/bin/env bash
# Which float32 graph is closer to the exact result, a model or its rewrite? Rewrites MODEL
# with the given rule files, runs both on the reference kernels (verify's seeded inputs),
# evaluates the original in float64 with ONNX Runtime (optimizer off) and prints each
# float32 result's error against that (tests/verify/precision_f64.cpp explains the columns).
#
#   tests/verify/precision_f64.sh BUILD_DIR MODEL.onnx WORK_DIR RULES.yaml...
#
# BUILD_DIR must hold graphfuse and precision_f64 (`cmake --build BUILD --target precision_f64`);
# ONNX Runtime comes from tests/ort (tests/ort/install.sh).
set -eu
build=$1 model=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
rule_args=()
for f in "$@"; do rule_args+=(--rules "$f"); done
mkdir -p "$work"
"$build/graphfuse" apply "${rule_args[@]}" "$model" -o "$work/rewritten.onnx"
"$build/precision_f64" prepare "$model" "$work/rewritten.onnx" "$work"
input_args=()
while IFS= read -r line; do input_args+=(--input "$line"); done < "$work/inputs.txt"
node "$here/../ort/run_model.js" "$work/original_f64.onnx" "${input_args[@]}" --level disabled \
  --out "$work/f64" --quiet
exact=()
for f in "$work"/f64/output*.bin; do exact+=("$f"); done
"$build/precision_f64" compare "$work" "${exact[@]}"
