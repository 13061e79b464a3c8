#!/usr/bin/env bash
# ctest entry point for tf_roundtrip and tfjs_judge (tests/tfjs/tfjs.cmake).
# usage: roundtrip_test.sh GRAPHFUSE DATA_DIR [judge]
# Without `judge`: the GraphDef and TF.js round trips must give the input's bytes back (.pb
# whole, TF.js shards) and the same model.json. With `judge`: TF.js (cpu and wasm) runs every
# TF.js model and its round trip on seeded inputs and they must agree; exit 77 = skipped
# (no node/npm or registry). With `judge RULES_DIR`: also rewrites every TF.js model with the
# rules there and --target tfjs-wasm, and TF.js must run and agree on the rewritten model.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
gf="${1:?usage: roundtrip_test.sh GRAPHFUSE DATA_DIR [judge]}"
data="${2:?usage: roundtrip_test.sh GRAPHFUSE DATA_DIR [judge]}"
mode="${3:-bytes}"
rules_dir="${4:-}"
make_workdir tf
status=0

if [ "$mode" = judge ]; then
  require_judge tfjs
fi

for pb in "$data"/*.pb; do
  name="$(basename "$pb" .pb)"
  "$gf" convert "$pb" "$work/$name.pb" >/dev/null || { echo "FAIL $name.pb: convert"; status=1; continue; }
  if cmp -s "$pb" "$work/$name.pb"; then echo "ok   $name.pb: round trip byte-identical"
  else echo "FAIL $name.pb: round trip differs"; status=1; fi
done

for model in "$data"/*/model.json; do
  name="$(basename "$(dirname "$model")")"
  out="$work/$name"
  mkdir -p "$out"
  "$gf" convert "$model" "$out/model.json" >/dev/null || { echo "FAIL $name: convert"; status=1; continue; }
  if [ "$mode" = judge ]; then
    if node "$here/judge.js" "$model" "$out/model.json" >"$work/log" 2>&1; then
      echo "ok   $name: TF.js agrees ($(tr '\n' ' ' <"$work/log"))"
    else
      echo "FAIL $name: $(cat "$work/log")"; status=1
    fi
    if [ -n "$rules_dir" ]; then
      mkdir -p "$out/fused"
      args=()
      for r in "$rules_dir"/*.yaml; do args+=(-r "$r"); done
      if ! "$gf" apply "$model" "${args[@]}" --target tfjs-wasm -q -o "$out/fused/model.json"; then
        echo "FAIL $name: apply rules"; status=1; continue
      fi
      if node "$here/judge.js" "$model" "$out/fused/model.json" >"$work/log" 2>&1; then
        echo "ok   $name: rewritten for tfjs-wasm, TF.js agrees ($(tr '\n' ' ' <"$work/log"))"
      else
        echo "FAIL $name rewritten: $(cat "$work/log")"; status=1
      fi
      # Nothing left that tfjs-wasm fuses: no convolution or MatMul with a foldable bias,
      # activation or per-channel scale after it (bench/tf/unfused.py).
      left=$(/usr/bin/python3 "$here/../../bench/tf/unfused.py" "$here/../../targets/tfjs-wasm.yaml" "$out/fused/model.json" --list)
      case $left in
        *"missed 0 "*) echo "ok   $name: nothing left to fuse for tfjs-wasm" ;;
        *) echo "FAIL $name: fusions missed for tfjs-wasm: $left"; status=1 ;;
      esac
    fi
    continue
  fi
  for shard in "$(dirname "$model")"/group*; do
    if ! cmp -s "$shard" "$out/$(basename "$shard")"; then echo "FAIL $name: $(basename "$shard") differs"; status=1; fi
  done
  if node -e 'const [a, b] = process.argv.slice(1).map((p) => JSON.parse(require("fs").readFileSync(p, "utf8")));
              const eq = (x, y) => JSON.stringify(x) === JSON.stringify(y);
              process.exit(eq(a, b) ? 0 : 1)' "$model" "$out/model.json" 2>/dev/null ||
     ! command -v node >/dev/null; then
    echo "ok   $name: shards byte-identical, model.json equal"
  else
    echo "FAIL $name: model.json differs"; status=1
  fi
done
exit $status
