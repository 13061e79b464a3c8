#!/usr/bin/env bash
# rules/onnx/layout.yaml's Pad and Resize rules checked numerically with ONNX Runtime (the
# reference kernels have neither op, so `verify: true` cannot check them).
#
#   tests/layout/pad_resize_test.sh GRAPHFUSE SOURCE_DIR WORK_DIR
#
# tests/layout/make_pad_resize.py writes an NHWC-form model (Pad reflect and constant, Resize
# linear by scales and nearest by sizes, between Transposes); rules/onnx must leave no
# Transpose, `graphfuse verify` (the reference kernels' Pad and Resize) must pass, and ONNX
# Runtime (optimizer off) must give the same output on both models within 1e-5 of its max
# magnitude. Exit 77 (skip) without python3-onnx or the ORT judge.
set -u
gf=$1 src=$2 work=$3
. "$src/tests/lib/judges.sh"
require_python_onnx
mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
ort="$src/tests/ort"
"$ort/install.sh" > ort_install.log 2>&1 || { echo "skipped: ORT judge not installed ($(tail -1 ort_install.log))"; exit 77; }

"$py" "$src/tests/layout/make_pad_resize.py" pr.onnx pr.bin || fail "make_pad_resize.py"
"$gf" apply --rules "$src/rules/onnx" pr.onnx -o pr.fused.onnx --stats > apply.log 2>&1 || { cat apply.log; fail "apply"; }
grep -E '^onnx_layout_(pad|resize)' apply.log
left=$("$py" -c 'import onnx,sys; print(sum(n.op_type == "Transpose" for n in onnx.load(sys.argv[1]).graph.node))' pr.fused.onnx) ||
  fail "counting Transposes"
echo "Transposes left: $left"
[ "$left" -eq 0 ] || fail "$left Transposes left"
"$gf" verify --rules "$src/rules/onnx" pr.onnx > verify.log 2>&1 || { cat verify.log; fail "graphfuse verify"; }
tail -1 verify.log
node "$ort/run_model.js" pr.onnx --input x=pr.bin --level disabled --out ort_in --quiet || fail "ORT on the input model"
node "$ort/run_model.js" pr.fused.onnx --input x=pr.bin --level disabled --out ort_out --quiet || fail "ORT on the rewritten model"
node "$ort/compare.js" ort_out/output0.bin ort_in/output0.bin --rtol 1e-5 || fail "outputs differ"
echo PASS
