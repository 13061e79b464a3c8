#!/usr/bin/env bash
# ctest tfjs_nchw: an NCHW TF.js model (tests/data/tf_nchw, which TF.js's wasm backend refuses
# as it is) rewritten with rules/tf --target tfjs-wasm becomes NHWC fused convolutions between
# Transposes: TF.js's cpu backend agrees with the original, its wasm backend runs the rewrite,
# and nothing is left for tfjs-wasm to fuse. Exit 77 = skipped (no TensorFlow.js).
# usage: nchw_test.sh GRAPHFUSE SOURCE_DIR
set -u
gf=${1:?usage: nchw_test.sh GRAPHFUSE SOURCE_DIR}
src=${2:?usage: nchw_test.sh GRAPHFUSE SOURCE_DIR}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
require_judge tfjs
make_workdir nchw
model=$src/tests/data/tf_nchw/model.json
"$gf" apply "$model" --rules "$src/rules/tf" --target tfjs-wasm -q -o "$work/model.json" || { echo "FAIL: apply"; exit 1; }
if grep -q '"NCHW"\|TkNIVw==' "$work/model.json"; then echo "FAIL: NCHW left in the rewrite"; exit 1; fi
node "$here/judge.js" "$model" "$work/model.json" --backends cpu || { echo "FAIL: TF.js cpu disagrees"; exit 1; }
node "$here/judge.js" "$work/model.json" "$work/model.json" --backends wasm || { echo "FAIL: TF.js wasm refuses the rewrite"; exit 1; }
left=$(/usr/bin/python3 "$src/bench/tf/unfused.py" "$src/targets/tfjs-wasm.yaml" "$work/model.json")
case $left in *"missed 0 "*) echo "ok: $left" ;; *) echo "FAIL: $left"; exit 1 ;; esac
