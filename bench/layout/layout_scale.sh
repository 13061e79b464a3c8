#!/usr/bin/env bash
# The 10^6-node rewrite benchmark with and without the layout rules (issue 10, docs/layouts.md):
# `scale_bench --case rewrite` on its TF-style CNN graph with the seed rule and rules/tf
# without rules/tf/layout.yaml, with it, and with rules/onnx/layout.yaml too, alternated
# ROUNDS times (REPS rewrites of a fresh graph each). Prints per configuration the medians
# over rounds of scale_bench's median rewrite CPU time (user + sys of the process during
# the rewrite) and wall time, and the ratios to the configuration without layout rules.
#
#   bench/layout/layout_scale.sh [BUILD_DIR]       (from the repo root; default build)
#
# Environment: NODES (default 1e6), THREADS (default 2), ROUNDS (default 5), REPS (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
sb="$B/bench/scale_bench"
[ -x "$sb" ] || { echo "layout_scale.sh: $sb is missing (cmake --build $B --target scale_bench)" >&2; exit 1; }
NODES=${NODES:-1e6} THREADS=${THREADS:-2} ROUNDS=${ROUNDS:-5} REPS=${REPS:-3}
without=(--rules rules/seed.yaml)
for f in rules/tf/*.yaml; do [ "$f" = rules/tf/layout.yaml ] || without+=(--rules "$f"); done
with=("${without[@]}" --rules rules/tf/layout.yaml)
both=("${with[@]}" --rules rules/onnx/layout.yaml)
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
med() { sort -g | awk '{v[NR]=$1} END {print NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
range() { sort -g | awk '{v[NR]=$1} END {printf "%.0f-%.0f", v[1], v[NR]}'; }
echo "Load before: $(uptime)"
echo "scale_bench --case rewrite --nodes $NODES --threads $THREADS --reps $REPS, configurations alternated $ROUNDS times"
for ((r = 0; r < ROUNDS; ++r)); do
  for c in without with both; do
    declare -n args=$c
    line=$("$sb" --case rewrite --nodes "$NODES" --threads "$THREADS" --reps "$REPS" "${args[@]}")
    echo "$line" | field rewrite_cpu_ms >> "$DIR/$c.cpu"
    echo "$line" | field rewrite_ms >> "$DIR/$c.wall"
    echo "$line" | field rewrites >> "$DIR/$c.rewrites"
  done
  cut -d' ' -f1 /proc/loadavg >> "$DIR/load"
done
echo
echo "| rules | rewrite CPU ms, median (range) | / without | rewrite wall ms, median (range) | / without | rewrites |"
echo "|---|---|---|---|---|---|"
c0=$(med < "$DIR/without.cpu") w0=$(med < "$DIR/without.wall")
for c in without with both; do
  case $c in without) name="seed + rules/tf without layout.yaml" ;; with) name="+ rules/tf/layout.yaml" ;;
    both) name="+ rules/tf/layout.yaml + rules/onnx/layout.yaml" ;; esac
  cm=$(med < "$DIR/$c.cpu") wm=$(med < "$DIR/$c.wall")
  printf "| %s | %.0f (%s) | %.3f | %.0f (%s) | %.3f | %s |\n" "$name" "$cm" "$(range < "$DIR/$c.cpu")" \
    "$(awk -v a="$cm" -v b="$c0" 'BEGIN {print a / b}')" "$wm" "$(range < "$DIR/$c.wall")" \
    "$(awk -v a="$wm" -v b="$w0" 'BEGIN {print a / b}')" "$(sort -u "$DIR/$c.rewrites" | tr '\n' ' ')"
done
echo
echo "Load during: $(tr '\n' ' ' < "$DIR/load"); after: $(uptime)"
