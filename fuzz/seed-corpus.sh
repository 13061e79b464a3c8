#!/usr/bin/env bash
# Rebuilds the seed inputs of fuzz/corpus/ from the shipped rules and examples (regression
# inputs, named regress-*, are kept), with the fuzz build's converter:
#   fuzz/seed-corpus.sh [FUZZ_BUILD_DIR]     (default build/fuzz; fuzz/build.sh makes it)
# rules:                     rules/**/*.yaml and the rule-check cases tests/check/*.yaml
# graph_text/yaml/json/gfb:  examples/seed_chain.graph, examples/cnn_400.yaml, the test graphs
#                            tests/rules/graphs/*, two small generated graphs, each written in
#                            the target's format (load_graph + save_graph)
# onnx:                      the same graphs written as .onnx where the export accepts them
#                            (typed YAML graphs), SqueezeNet left out for its size (4.8 MB)
# apply:                     every graph seed above (the target reads any format)
# graphdef, tfjs:            tests/data/tf's models and hostile inputs, by fuzz/tf_seeds.py
set -euo pipefail
cd "$(dirname "$0")/.."
conv=${1:-build/fuzz}/seed_convert
export ASAN_OPTIONS=detect_leaks=0
c=fuzz/corpus
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for t in rules graph_text graph_yaml graph_json graph_gfb onnx apply graphdef tfjs; do
  mkdir -p "$c/$t"
  find "$c/$t" -type f ! -name 'regress-*' -delete
done
for f in rules/*.yaml rules/*/*.yaml tests/check/*.yaml; do
  n=${f//\//_}; cp "$f" "$c/rules/$n"
done
srcs=(examples/seed_chain.graph examples/cnn_400.yaml tests/rules/graphs/*)
"$conv" --gen 40 1 "$tmp/gen40.graph"
"$conv" --gen 60 2 "$tmp/gen60.yaml"
srcs+=("$tmp/gen40.graph" "$tmp/gen60.yaml")
for s in "${srcs[@]}"; do
  b=$(basename "${s%.*}")
  for pair in graph_text:graph graph_yaml:yaml graph_json:json graph_gfb:gfb onnx:onnx; do
    t=${pair%%:*} ext=${pair#*:}
    if "$conv" "$s" "$c/$t/$b.$ext" 2>"$tmp/err"; then
      [ "$t" = onnx ] || cp "$c/$t/$b.$ext" "$c/apply/$b.$ext"
    else
      echo "seed-corpus: $s -> .$ext skipped: $(head -1 "$tmp/err")"
    fi
  done
done
/usr/bin/python3 fuzz/tf_seeds.py "$c"
du -sh "$c"/* | sed 's/^/seed-corpus: /'
