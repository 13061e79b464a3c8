#!/usr/bin/env bash
# `graphfuse report` rendered by a real browser (Debian's chromium, headless, --dump-dom): the
# page's own script records what it found (data-* attributes on <body>): both SVGs present,
# every fused node linked to an existing rule row, no script errors. Also `graphfuse dot`
# output accepted by Graphviz for every shared model (skipped without ../shared/models), and
# `convert` / `diff` between formats.
# usage: report_test.sh GRAPHFUSE SOURCE_DIR
set -euo pipefail
gf=$1 src=$(cd "$2" && pwd)
command -v chromium >/dev/null || { echo "chromium not installed (scripts/setup installs it)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

dump_body() {  # the <body> tag after the page's scripts ran
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/profile" --virtual-time-budget=10000 \
    --dump-dom "file://$1" 2>"$tmp/chromium.log" | grep -o '<body[^>]*>' || true
}
expect_body() {  # FILE FUSED_LINKS
  local body
  body=$(dump_body "$1")
  echo "$(basename "$1"): $body"
  [[ $body == *'data-ready="1"'* ]] || { echo "FAIL: the page's script did not run"; exit 1; }
  [[ $body == *'data-svgs="2"'* ]] || { echo "FAIL: expected the before and after SVGs"; exit 1; }
  [[ $body == *"data-fused-links=\"$2\""* ]] || { echo "FAIL: expected $2 fused nodes linked to rule rows"; exit 1; }
  [[ $body == *'data-broken-links="0"'* ]] || { echo "FAIL: a fused node links to a missing rule row"; exit 1; }
  [[ $body != *'data-errors'* ]] || { echo "FAIL: script errors in the page"; exit 1; }
}

# squeezenet (bundled): 26 Conv+Relu pairs become FusedConv, each tied to onnx_conv_act.
"$gf" report --rules "$src/rules/onnx" "$src/examples/models/squeezenet1_1.onnx" -o "$tmp/squeezenet.html" --verify
grep -q 'id="rule-onnx_conv_act"' "$tmp/squeezenet.html" || { echo "FAIL: no onnx_conv_act row"; exit 1; }
grep -q 'Numerical check: <span class="pass">PASS' "$tmp/squeezenet.html" || { echo "FAIL: --verify section"; exit 1; }
[ "$(grep -o 'xlink:href="#rule-onnx_conv_act"' "$tmp/squeezenet.html" | wc -l)" = 26 ] || { echo "FAIL: 26 fused nodes"; exit 1; }
! grep -qE 'src="http|href="http' "$tmp/squeezenet.html" || { echo "FAIL: the page must not reach the network"; exit 1; }
expect_body "$tmp/squeezenet.html" 26

# A graph too big to draw whole: fused regions only, and the page says so.
"$gf" gen --nodes 20000 --seed 1 -o "$tmp/g.gfb" >/dev/null
"$gf" report --rules "$src/rules/seed.yaml" "$tmp/g.gfb" -o "$tmp/big.html" >/dev/null
grep -q 'too many to draw whole' "$tmp/big.html" || { echo "FAIL: big graph not collapsed"; exit 1; }
expect_body "$tmp/big.html" 120

# A failed report leaves no file behind.
if "$gf" report --rules "$src/rules/seed.yaml" "$tmp/missing.graph" -o "$tmp/none.html" 2>/dev/null; then
  echo "FAIL: a missing input must fail"; exit 1
fi
[ ! -e "$tmp/none.html" ] || { echo "FAIL: output written on failure"; exit 1; }

# convert through every format and back: diff says equal (exit 0); a fused graph differs (1);
# an unreadable file is trouble (2).
sq=$src/examples/models/squeezenet1_1.onnx
prev=$sq
for ext in gfb json yaml graph; do
  "$gf" convert "$prev" "$tmp/sq.$ext" >/dev/null
  prev=$tmp/sq.$ext
done
"$gf" diff "$sq" "$tmp/sq.json" || { echo "FAIL: onnx -> gfb -> json changed the graph"; exit 1; }
"$gf" diff -q "$tmp/sq.gfb" "$tmp/sq.graph" || { echo "FAIL: .graph round trip changed the structure"; exit 1; }
"$gf" apply --rules "$src/rules/onnx" "$sq" -o "$tmp/fused.gfb" -q
set +e
"$gf" diff "$sq" "$tmp/fused.gfb" >"$tmp/diff.txt"; rc=$?
"$gf" diff "$sq" "$tmp/missing.gfb" 2>/dev/null; rc_missing=$?
set -e
[ $rc = 1 ] && grep -q 'com.microsoft.FusedConv' "$tmp/diff.txt" || { echo "FAIL: diff of a fused graph: rc $rc"; exit 1; }
[ $rc_missing = 2 ] || { echo "FAIL: diff with a missing file: rc $rc_missing, expected 2"; exit 1; }
"$gf" dot "$src/examples/seed_chain.graph" -o - --attrs | grep -q 'strides = \[1, 1\]' || { echo "FAIL: dot --attrs"; exit 1; }

# DOT output Graphviz accepts, on every shared model, with attributes and shapes.
models=$src/../shared/models
if [ -d "$models" ]; then
  for m in "$models"/*.onnx; do
    "$gf" dot "$m" -o - --attrs --shapes | dot -Tsvg >/dev/null || { echo "FAIL: dot -Tsvg rejected $(basename "$m")"; exit 1; }
  done
  echo "dot -Tsvg accepted $(ls "$models"/*.onnx | wc -l) shared models"
fi
echo PASS
