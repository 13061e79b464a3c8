#!/usr/bin/env bash
# NHWC (TensorFlow-converted) forms of the shared CNNs through rules/onnx (issue 10).
#
#   tests/layout/nhwc_test.sh GRAPHFUSE SOURCE_DIR WORK_DIR MODEL MAX_TRANSPOSES MIN_FUSEDCONV [MIN_QUICKGELU]
#
# Builds MODEL's NHWC form with tests/layout/make_nhwc.py, applies rules/onnx, and checks:
# Transposes left <= MAX_TRANSPOSES, com.microsoft.FusedConv >= MIN_FUSEDCONV and
# com.microsoft.QuickGelu >= MIN_QUICKGELU (default 0; ONNX Runtime 1.30's figures on the
# same file), `graphfuse verify` passes, a second apply changes nothing,
# the output is byte-identical at --threads 1 and 2, and (when the ORT judge in tests/ort
# installs) ONNX Runtime on the fused NHWC model with the transposed input agrees with ONNX
# Runtime on the original NCHW model within 1e-4 of the output's max magnitude.
# The NCHW model through rules/onnx must give the same ops as the NHWC form, Transposes
# aside: the same FusedConv (residual Adds as Z included), QuickGelu and plain ops, and it
# must reach MIN_FUSEDCONV and MIN_QUICKGELU too.
# MODEL efficientnet_b0 is not a shared model: tests/layout/make_efficientnet.py writes it (and
# a seeded input) into WORK_DIR first; ORT's reference output is that of the NCHW file.
# Exit 77 (skip) without ../shared/models or without Debian's python3-onnx.
set -u
gf=$1 src=$2 work=$3 model=$4 max_t=$5 min_fc=$6 min_qg=${7:-0}
models="$src/../shared/models"
. "$src/tests/lib/judges.sh"
require_python_onnx
mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL $model: $*"; exit 1; }
if [ "$model" = efficientnet_b0 ]; then
  "$py" "$src/tests/layout/make_efficientnet.py" "$model.onnx" --input-out "$model.input0.bin" ||
    fail "make_efficientnet.py"
  nchw="$work/$model.onnx" input0="$work/$model.input0.bin"
else
  [ -f "$models/$model.onnx" ] || { echo "skipped: $models/$model.onnx not found"; exit 77; }
  nchw="$models/$model.onnx" input0="$models/io/$model.input0.bin"
fi

"$py" "$src/tests/layout/make_nhwc.py" "$nchw" "$model.nhwc.onnx" || fail "make_nhwc.py"
"$gf" apply --rules "$src/rules/onnx" "$model.nhwc.onnx" -o "$model.fused.onnx" --threads 1 > apply1.log 2>&1 ||
  { cat apply1.log; fail "apply"; }
grep -E '^(time|nodes):' apply1.log
"$gf" apply --rules "$src/rules/onnx" "$model.nhwc.onnx" -o "$model.fused2.onnx" --threads 2 > apply2.log 2>&1 ||
  { cat apply2.log; fail "apply --threads 2"; }
cmp -s "$model.fused.onnx" "$model.fused2.onnx" || fail "output differs between --threads 1 and 2"
"$gf" apply --rules "$src/rules/onnx" "$model.fused.onnx" -o "$model.again.onnx" > again.log 2>&1 ||
  { cat again.log; fail "second apply"; }
cmp -s "$model.fused.onnx" "$model.again.onnx" || { cat again.log; fail "a second apply changed the model"; }

count_ops() {  # FILE...: "Transposes FusedConv QuickGelu" of each
  "$py" - "$@" <<'PY'
import collections, sys, onnx
for f in sys.argv[1:]:
    c = collections.Counter(n.op_type for n in onnx.load(f).graph.node)
    print(c["Transpose"], c["FusedConv"], c["QuickGelu"])
PY
}
counts=$(count_ops "$model.nhwc.onnx" "$model.fused.onnx" | tr '\n' ' ') || fail "counting ops"
read -r t_before _ _ t_after fused quick <<< "$counts"
echo "$model NHWC: Transposes $t_before -> $t_after (max $max_t), FusedConv $fused (min $min_fc), QuickGelu $quick (min $min_qg)"
[ "$t_after" -le "$max_t" ] || fail "$t_after Transposes left, more than $max_t"
[ "$fused" -ge "$min_fc" ] || fail "$fused FusedConv, fewer than $min_fc"
[ "$quick" -ge "$min_qg" ] || fail "$quick QuickGelu, fewer than $min_qg"
# The NCHW model reaches the same fusions: the layout cost is gone, not only moved.
"$gf" apply --rules "$src/rules/onnx" "$nchw" -o "$model.nchw.fused.onnx" > apply_nchw.log 2>&1 ||
  { cat apply_nchw.log; fail "apply on the NCHW model"; }
read -r _ fused_nchw quick_nchw <<< "$(count_ops "$model.nchw.fused.onnx")" || fail "counting ops"
echo "$model NCHW: FusedConv $fused_nchw (min $min_fc), QuickGelu $quick_nchw (min $min_qg)"
[ "$fused_nchw" -ge "$min_fc" ] || fail "NCHW: $fused_nchw FusedConv, fewer than $min_fc"
[ "$quick_nchw" -ge "$min_qg" ] || fail "NCHW: $quick_nchw QuickGelu, fewer than $min_qg"
ops_but_transposes() {  # FILE: "op:count ..." sorted, Transposes left out
  "$py" - "$1" <<'PY'
import collections, sys, onnx
c = collections.Counter(n.op_type for n in onnx.load(sys.argv[1]).graph.node if n.op_type != "Transpose")
print(" ".join(f"{k}:{v}" for k, v in sorted(c.items())))
PY
}
ops_nhwc=$(ops_but_transposes "$model.fused.onnx") && ops_nchw=$(ops_but_transposes "$model.nchw.fused.onnx") ||
  fail "counting ops"
[ "$ops_nhwc" = "$ops_nchw" ] || fail "NHWC and NCHW forms fuse differently: NHWC $ops_nhwc, NCHW $ops_nchw"

"$gf" verify --rules "$src/rules/onnx" "$model.nhwc.onnx" > verify.log 2>&1 || { cat verify.log; fail "graphfuse verify"; }
tail -1 verify.log

ort="$src/tests/ort"
if "$ort/install.sh" > ort_install.log 2>&1; then
  shape=$("$py" -c 'import onnx,sys; print(*[d.dim_value for d in onnx.load(sys.argv[1]).graph.input[0].type.tensor_type.shape.dim])' "$nchw")
  read -r n c h w <<< "$shape"
  "$py" "$src/tests/layout/make_nhwc.py" --transpose-input "$input0" input_nhwc.bin "$n" "$c" "$h" "$w" ||
    fail "transposing the input"
  node "$ort/run_model.js" "$nchw" --input "input=$input0:${n}x${c}x${h}x${w}" --out ort_nchw --quiet ||
    fail "ORT on the NCHW model"
  node "$ort/run_model.js" "$model.fused.onnx" --input "input=input_nhwc.bin:${n}x${h}x${w}x${c}" \
    --out ort_fused --quiet || fail "ORT on the fused NHWC model"
  node "$ort/compare.js" ort_fused/output0.bin ort_nchw/output0.bin --rtol 1e-4 || fail "ORT outputs differ"
else
  echo "ORT judge not installed ($(tail -1 ort_install.log)); ONNX Runtime comparison skipped"
fi
echo "PASS $model"
