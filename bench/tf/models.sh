#!/usr/bin/env bash
# The TF.js model table: each graph model under MODELS (bench/tf/get_models.sh) rewritten
# with `graphfuse apply --rules rules/tf --target tfjs-wasm`, what is left unfused
# (bench/tf/unfused.py), and TF.js's verdict (tests/tfjs/judge.js: wasm backend, node, 1
# thread). Latency is bench/tf/latency.sh's table (many rounds, a noise floor).
#   usage: bench/tf/models.sh MODELS [GRAPHFUSE] [OUT]   (from the repository root)
# Prints one markdown row per model; the rewritten models are left in OUT
# (default /tmp/graphfuse-tf-models). Needs tests/tfjs/node_modules (tests/tfjs/install.sh).
# MODEL_FILTER=regex limits the models.
set -uo pipefail
models=${1:?usage: models.sh MODELS [GRAPHFUSE] [OUT]}
gf=${2:-build/graphfuse}
out=${3:-/tmp/graphfuse-tf-models}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"

. "$root/bench/tf/model_set.sh"

echo "| model | nodes before -> after | unfused conv/depthwise/matmul before -> after | fused before -> after | missed fusions before -> after (after: bias/activation/scale) | TF.js agrees (max diff / max abs) |"
echo "|---|---|---|---|---|---|"
one_model() {
  local name=$1 m=$2 d=$3 be j row v
  if ! "$gf" apply "$m" --rules "$root/rules/tf" --target tfjs-wasm -q -o "$d/model.json" 2>"$d/apply.err"; then
    echo "| $name | apply failed: $(head -c 160 "$d/apply.err" | tr '\n|' '  ') | | | | |"; return
  fi
  read -r n0 p0 f0 m0 <<<"$(/usr/bin/python3 "$root/bench/tf/unfused.py" "$root/targets/tfjs-wasm.yaml" "$m" --json |
    /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["nodes"], r["plain"], r["fused"], r["missed"])')"
  read -r n1 p1 f1 mb ma ms <<<"$(/usr/bin/python3 "$root/bench/tf/unfused.py" "$root/targets/tfjs-wasm.yaml" "$d/model.json" --json |
    /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["nodes"], r["plain"], r["fused"], r["missed_bias"], r["missed_activation"], r["missed_scale"])')"
  be=$(backend "$name")
  # shellcheck disable=SC2046
  j=$(node "$root/tests/tfjs/judge.js" "$m" "$d/model.json" --backends "$be" --threads 1 --json $(judge_options "$name") 2>&1 | tail -1)
  verdict=$(/usr/bin/python3 -c '
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError:
    print("judge: " + sys.argv[1][:120].replace("|", " ")); sys.exit()
ok = ("yes" if r["agree"] else "NO") + (" %.1e" % r["worst"] if r["worst"] is not None else "")
if r["backend"] != "wasm": ok += " (" + r["backend"] + ")"
print(ok)' "$j")
  echo "| $name | $n0 -> $n1 | $p0 -> $p1 | $f0 -> $f1 | $m0 -> $((mb + ma + ms)) ($mb/$ma/$ms) | $verdict |"
}
for_each_model "$models" "$out" one_model
