#!/usr/bin/env bash
# ctest entry point for transformers_models: the exported transformer blocks in
# tests/data/transformers go through `graphfuse apply --rules rules/onnx`; ONNX Runtime must run
# every output as written (optimizer disabled) within 1e-4 of the original's largest output,
# onnx.checker must pass, and the node count must not exceed expected.json's expect_at_most
# (ORT's transformers optimizer's count is recorded beside it).
# usage: transformers_test.sh GRAPHFUSE   (exit 77 = skipped: no node/npm/ORT or no python3-onnx)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
root="$here/../.."
graphfuse="${1:?usage: transformers_test.sh GRAPHFUSE}"
require_python_onnx
require_judge ort
data="$root/tests/data/transformers"
exec "$py" "$root/bench/transformers/compare.py" --graphfuse "$graphfuse" --check "$data/expected.json" \
     --batch 2 --seq 16 "$data"/*.onnx
