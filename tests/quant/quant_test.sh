#!/usr/bin/env bash
# ctest entry point for quant_ort: graphfuse applies rules/onnx to the small quantized models in
# tests/quant/models (tests/quant/make_models.py made them with bench/quant/quantize.py, four
# styles) and ONNX Runtime judges the output: at level extended it makes at least as many of each
# quantized kernel (QLinearConv, QLinearMatMul, MatMulIntegerToFloat, ...) as on the original,
# and the output agrees with the original at level disabled no worse than ORT's own fusion.
# usage: quant_test.sh GRAPHFUSE [RULES_DIR]   (exit 77 = skipped: no onnxruntime-node, no python3-onnx)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
graphfuse="${1:?usage: quant_test.sh GRAPHFUSE [RULES_DIR]}"
rules="${2:-$here/../../rules/onnx}"
require_python_onnx
require_judge ort
make_workdir quant
shopt -s nullglob
models=("$here"/models/*.*.onnx)
[ ${#models[@]} -gt 0 ] || { echo "error: no models in $here/models"; exit 1; }
exec "$py" "$here/../../bench/quant/measure.py" --graphfuse "$graphfuse" --rules "$rules" \
     --work "$work" --check "${models[@]}"
