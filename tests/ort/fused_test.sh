#!/usr/bin/env bash
# ctest entry point for ort_fused: ONNX Runtime judges the models graphfuse fuses with
# rules/onnx/*.yaml (outputs vs the references and vs the original model, every fused node
# loaded and run as written), the fused-node counts are checked against the targets, and
# every rule family is checked on a small generated model (tests/ort/fused_cases.js).
# usage: fused_test.sh GRAPHFUSE [MODELS_DIR] [RULES_DIR]   (exit 77 = skipped)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
graphfuse="${1:?usage: fused_test.sh GRAPHFUSE [MODELS_DIR] [RULES_DIR]}"
models="${2:-$here/../../../shared/models}"
rules_dir="${3:-$here/../../rules/onnx}"

if [ ! -f "$models/manifest.json" ]; then
  echo "skipped: no models ($models/manifest.json not found)"
  exit 77
fi
shopt -s nullglob
rule_files=("$rules_dir"/*.yaml)
if [ ${#rule_files[@]} -eq 0 ]; then
  echo "error: no rule files in $rules_dir"
  exit 1
fi
require_judge ort
make_workdir fused

rule_args=()
for f in "${rule_files[@]}"; do rule_args+=(--rules "$f"); done

status=0
echo "== fused vs original vs reference (ONNX Runtime, default optimization) =="
node "$here/roundtrip_test.js" --models "$models" --work "$work" \
     --convert "$graphfuse" apply "${rule_args[@]}" '{in}' -o '{out}' || status=1
echo "== fused-node counts; fused models run with ONNX Runtime's optimizer disabled =="
node "$here/fused_check.js" --models "$models" --work "$work" || status=1
echo "== every rule family on a small model: original vs fused in ONNX Runtime =="
node "$here/fused_cases.js" --graphfuse "$graphfuse" --rules "$rules_dir" --work "$work/cases" || status=1
exit $status
