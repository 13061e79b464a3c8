#!/usr/bin/env bash
# The TF.js latency table: each graph model under MODELS (bench/tf/get_models.sh) rewritten
# with `graphfuse apply --rules rules/tf --target tfjs-wasm` and timed against its original by
# bench/tf/latency.js (wasm backend, node, 1 thread, CPU time; rounds of original, original
# again and rewritten in rotating order, as many as BUDGET seconds of CPU time hold (default
# 20) and at least RUNS; medians, the ratio's 95% interval, and the original against itself
# as the noise floor). A rewrite that leaves the graph equal
# (`graphfuse diff`) is not timed: its latency is the original's by construction.
#   usage: bench/tf/latency.sh MODELS [GRAPHFUSE] [RUNS] [OUT]   (from the repository root)
# Prints one markdown row per model, then how many were slower / same / faster; the rewritten
# models are left in OUT (default /tmp/graphfuse-tf-latency). MODEL_FILTER=regex limits the
# models; RULES (default rules/tf) and TARGET (default tfjs-wasm) change the rewrite, to find
# which rule a slower model owes its loss to. Needs tests/tfjs/node_modules (tests/tfjs/install.sh).
set -uo pipefail
models=${1:?usage: latency.sh MODELS [GRAPHFUSE] [RUNS] [OUT]}
gf=${2:-build/graphfuse}
runs=${3:-31}
out=${4:-/tmp/graphfuse-tf-latency}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"

. "$root/bench/tf/model_set.sh"

echo "| model | rounds | ms original | ms original again | ms rewritten | rewritten / original [95% interval] | original again / original [95% interval] (noise floor) | spread of original (IQR / median) | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
: >"$out/latency.jsonl"
declare -A count=([slower]=0 [same]=0 [faster]=0 [equal]=0 [failed]=0)
one_model() {
  local name=$1 m=$2 d=$3 be j row v
  if ! "$gf" apply "$m" --rules "${RULES:-$root/rules/tf}" --target "${TARGET:-tfjs-wasm}" -q -o "$d/model.json" 2>"$d/apply.err"; then
    echo "| $name | apply failed: $(head -c 160 "$d/apply.err" | tr '\n|' '  ') | | | | | | | |"; count[failed]=$((count[failed] + 1)); return
  fi
  if "$gf" diff "$m" "$d/model.json" 2>/dev/null | grep -q '^graphs are equal'; then
    count[equal]=$((count[equal] + 1)); return
  fi
  be=$(backend "$name")
  # shellcheck disable=SC2046
  j=$(node "$root/bench/tf/latency.js" "$m" "$d/model.json" --backends "$be" --threads 1 --runs "$runs" --budget "${BUDGET:-20}" --clock cpu --json $(judge_options "$name") 2>&1 | tail -1)
  row=$(/usr/bin/python3 -c '
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError:
    print("| latency.js: " + sys.argv[1][:120].replace("|", " ") + " | | | | | | | failed"); sys.exit()
be = "" if r["backend"] == "wasm" else " (" + r["backend"] + ")"
print("| %d | %.2f%s | %.2f | %.2f | %.3f [%.3f, %.3f] | %.3f [%.3f, %.3f] | %.0f%% | %s" % (
    r["runs"], r["original_ms"], be, r["repeat_ms"], r["rewritten_ms"], r["ratio"], r["ratio_lo"], r["ratio_hi"],
    r["noise"], r["noise_lo"], r["noise_hi"], 100 * r["spread"], r["verdict"]))' "$j")
  v=${row##*| }; [[ -v "count[$v]" ]] || v=failed
  count[$v]=$((count[$v] + 1))
  echo "| $name $row |"
  echo "$j" >>"$out/latency.jsonl"
}
for_each_model "$models" "$out" one_model
echo
/usr/bin/python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
if rows:
    wide = max(r["noise_hi"] - r["noise_lo"] for r in rows)
    print("noise floor (original against itself): median ratios %.3f-%.3f, intervals %.3f-%.3f, widest %.3f; "
          "rewritten / original: %.3f-%.3f" % (min(r["noise"] for r in rows), max(r["noise"] for r in rows),
          min(r["noise_lo"] for r in rows), max(r["noise_hi"] for r in rows), wide,
          min(r["ratio"] for r in rows), max(r["ratio"] for r in rows)))' "$out/latency.jsonl"
echo "slower: ${count[slower]}, same within noise: ${count[same]}, faster: ${count[faster]}, equal graphs (not timed): ${count[equal]}, failed: ${count[failed]}"
