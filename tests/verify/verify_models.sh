#!/usr/bin/env bash
# Verifies the shipped rules on every model in a folder: all ONNX rules together, then each
# rule that fires on the model on its own (`graphfuse verify --only`), and prints one row per
# run (model, rules, max abs, max rel, max abs / max |ref|, verdict). Exit 1 if any run fails,
# 77 (skipped) when the models folder is absent. The verdict is verify's: every element within
# 1e-5 + 1e-4 |ref| and the norm-wise error (abs/ref) within 1e-4; max_rel, element by
# element, is reported only (float32 rounding makes it large where an output cancels to near
# zero, in the original graph as much as in the rewrite: tests/verify/precision_f64.sh).
#
#   tests/verify/verify_models.sh GRAPHFUSE MODELS_DIR RULES_DIR [--kernels reference|fast] [--quick]
#
# --quick verifies only the all-rules run per model (what ctest runs, with the fast kernels).
set -u
exe=$1 models=$2 rules=$3
shift 3
kernels=reference quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --kernels) kernels=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
if [ ! -d "$models" ] || ! ls "$models"/*.onnx > /dev/null 2>&1; then
  echo "no models in $models: skipped"
  exit 77
fi
rule_args=()
for f in "$rules"/*.yaml; do rule_args+=(--rules "$f"); done

status=0
row() {  # model, label, output of graphfuse verify
  local model=$1 label=$2 out=$3
  # Worst output of the run (models here have one output; take the largest errors).
  echo "$out" | awk -v m="$model" -v l="$label" '
    / max_abs / { for (i = 1; i <= NF; i++) { if ($i == "max_abs") a = $(i+1); if ($i == "max_rel") r = $(i+1); if ($i == "max_abs/max|ref|") s = $(i+1) }
                  gsub(",", "", a); gsub(",", "", r)
                  if (a + 0 > ma) ma = a + 0; if (r + 0 > mr) mr = r + 0; if (s + 0 > ms) ms = s + 0 }
    /^(PASS|FAIL) \(/ { v = $1 }
    END { printf "%-34s %-44s %10.3g %10.3g %10.3g  %s\n", m, l, ma, mr, ms, v == "" ? "ERROR" : v }'
}
printf "%-34s %-44s %10s %10s %10s  %s\n" model rules max_abs max_rel abs/ref verdict
for model in "$models"/*.onnx; do
  name=$(basename "$model")
  out=$("$exe" verify "${rule_args[@]}" "$model" --kernels "$kernels" 2>&1)
  rc=$?
  [ $rc -ne 0 ] && status=1
  applied=$(echo "$out" | sed -n 's/^rules applied: //p')
  row "$name" "all (${applied:-error})" "$out"
  [ $rc -ne 0 ] && echo "$out" | sed 's/^/    /'
  [ $quick -eq 1 ] && continue
  # Each rule that fired, alone; a rule that only fires after others (a Clip fused once the
  # batch norm is folded, a chained layer norm) with the rules that fired before it.
  before=()
  for rule in $(echo "$applied" | tr ',' '\n' | awk '{print $1}'); do
    [ "$rule" = none ] && continue
    only=(--only "$rule") label="only $rule"
    out=$("$exe" verify "${rule_args[@]}" "${only[@]}" "$model" --kernels "$kernels" 2>&1)
    rc=$?
    if echo "$out" | grep -q '^rules applied: none' && [ ${#before[@]} -gt 0 ]; then
      for r in "${before[@]}"; do only+=(--only "$r"); done
      label="$rule (after ${before[*]})"
      out=$("$exe" verify "${rule_args[@]}" "${only[@]}" "$model" --kernels "$kernels" 2>&1)
      rc=$?
    fi
    [ $rc -ne 0 ] && status=1
    n=$(echo "$out" | sed -n 's/^rules applied: //p')
    row "$name" "$label: ${n:-error}" "$out"
    [ $rc -ne 0 ] && echo "$out" | sed 's/^/    /'
    before+=("$rule")
  done
done
exit $status
