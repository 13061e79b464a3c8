#!/usr/bin/env bash
# NHWC (TensorFlow-converted) forms of the shared CNNs through rules/onnx (issue 10).
#
#   tests/layout/nhwc_test.sh GRAPHFUSE SOURCE_DIR WORK_DIR MODEL MAX_TRANSPOSES MIN_FUSEDCONV
#
# Builds MODEL's NHWC form with tests/layout/make_nhwc.py, applies rules/onnx, and checks:
# Transposes left <= MAX_TRANSPOSES, com.microsoft.FusedConv >= MIN_FUSEDCONV (ONNX Runtime
# 1.30's figures on the same file), `graphfuse verify` passes, a second apply changes nothing,
# the output is byte-identical at --threads 1 and 2, and (when the ORT judge in tests/ort
# installs) ONNX Runtime on the fused NHWC model with the transposed input agrees with ONNX
# Runtime on the original NCHW model within 1e-4 of the output's max magnitude.
# Exit 77 (skip) without ../shared/models or without Debian's python3-onnx.
set -u
gf=$1 src=$2 work=$3 model=$4 max_t=$5 min_fc=$6
models="$src/../shared/models"
py=/usr/bin/python3
[ -f "$models/$model.onnx" ] || { echo "skipped: $models/$model.onnx not found"; exit 77; }
"$py" -c 'import onnx, numpy' 2>/dev/null || { echo "skipped: python3-onnx / python3-numpy not installed"; exit 77; }
mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL $model: $*"; exit 1; }

"$py" "$src/tests/layout/make_nhwc.py" "$models/$model.onnx" "$model.nhwc.onnx" || fail "make_nhwc.py"
"$gf" apply --rules "$src/rules/onnx" "$model.nhwc.onnx" -o "$model.fused.onnx" --threads 1 > apply1.log 2>&1 ||
  { cat apply1.log; fail "apply"; }
grep -E '^(time|nodes):' apply1.log
"$gf" apply --rules "$src/rules/onnx" "$model.nhwc.onnx" -o "$model.fused2.onnx" --threads 2 > apply2.log 2>&1 ||
  { cat apply2.log; fail "apply --threads 2"; }
cmp -s "$model.fused.onnx" "$model.fused2.onnx" || fail "output differs between --threads 1 and 2"
"$gf" apply --rules "$src/rules/onnx" "$model.fused.onnx" -o "$model.again.onnx" > again.log 2>&1 ||
  { cat again.log; fail "second apply"; }
cmp -s "$model.fused.onnx" "$model.again.onnx" || { cat again.log; fail "a second apply changed the model"; }

counts=$("$py" - "$model.nhwc.onnx" "$model.fused.onnx" <<'PY'
import collections, sys, onnx
before = collections.Counter(n.op_type for n in onnx.load(sys.argv[1]).graph.node)
after = collections.Counter(n.op_type for n in onnx.load(sys.argv[2]).graph.node)
print(before["Transpose"], after["Transpose"], after["FusedConv"])
PY
) || fail "counting ops"
read -r t_before t_after fused <<< "$counts"
echo "$model NHWC: Transposes $t_before -> $t_after (max $max_t), FusedConv $fused (min $min_fc)"
[ "$t_after" -le "$max_t" ] || fail "$t_after Transposes left, more than $max_t"
[ "$fused" -ge "$min_fc" ] || fail "$fused FusedConv, fewer than $min_fc"

"$gf" verify --rules "$src/rules/onnx" "$model.nhwc.onnx" > verify.log 2>&1 || { cat verify.log; fail "graphfuse verify"; }
tail -1 verify.log

ort="$src/tests/ort"
if "$ort/install.sh" > ort_install.log 2>&1; then
  shape=$("$py" -c 'import onnx,sys; print(*[d.dim_value for d in onnx.load(sys.argv[1]).graph.input[0].type.tensor_type.shape.dim])' "$models/$model.onnx")
  read -r n c h w <<< "$shape"
  "$py" "$src/tests/layout/make_nhwc.py" --transpose-input "$models/io/$model.input0.bin" input_nhwc.bin "$n" "$c" "$h" "$w" ||
    fail "transposing the input"
  node "$ort/run_model.js" "$models/$model.onnx" --out ort_nchw --quiet || fail "ORT on the NCHW model"
  node "$ort/run_model.js" "$model.fused.onnx" --input "input=input_nhwc.bin:${n}x${h}x${w}x${c}" \
    --manifest "$models/manifest.json" --model-key "$model" --out ort_fused --quiet || fail "ORT on the fused NHWC model"
  node "$ort/compare.js" ort_fused/output0.bin ort_nchw/output0.bin --rtol 1e-4 || fail "ORT outputs differ"
else
  echo "ORT judge not installed ($(tail -1 ort_install.log)); ONNX Runtime comparison skipped"
fi
echo "PASS $model"
