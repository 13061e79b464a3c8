#!/usr/bin/env bash
# The "Rewriter at scale" tables of docs/performance.md (issue 7), printed as markdown:
# scale_bench (rewrite 1/2 threads, match speed-up, ns/node, apply from .gfb and JSON
# with phase timings and peak memory, VF2 baseline), then the Python baseline at 10^6
# nodes (bench/scale/seed_pass.py, parse + pass + write) against `graphfuse apply` on
# the same JSON file with the same rule, checked to give the same graph.
#
#   bench/scale/run_scale.sh [BUILD_DIR] [-- scale_bench options]
#   cmake --build build --target graphfuse scale_bench && chrt -f 10 bench/scale/run_scale.sh build
#
# Environment: PY_NODES (default 1e6), REPS (default 3), JSON_REPS (runs of graphfuse on
# JSON, default REPS), DIR (default /tmp/graphfuse-scale).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
shift || true
[ "${1:-}" = "--" ] && shift
PY_NODES=${PY_NODES:-1e6}
REPS=${REPS:-3}
JSON_REPS=${JSON_REPS:-$REPS}
DIR=${DIR:-/tmp/graphfuse-scale}
for t in "$B/bench/scale_bench" "$B/graphfuse"; do
  [ -x "$t" ] || { echo "run_scale.sh: $t is missing (cmake --build $B --target graphfuse scale_bench)" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "run_scale.sh: python3 is missing" >&2; exit 1; }
mkdir -p "$DIR"
echo "Load before: $(uptime)"
echo
"$B/bench/scale_bench" --dir "$DIR" "$@"
echo

# Python baseline: the seed rule only, on both sides. graphfuse runs on the same JSON file
# (checked to give the same graph as Python) and on the same graph as .gfb, its binary
# format (written by the generator, which is deterministic, so it is the same graph).
json="$DIR/py_in.json"
gfb="$DIR/py_in.gfb"
"$B/bench/scale_bench" --case generate --nodes "$PY_NODES" --output "$json" >/dev/null
"$B/bench/scale_bench" --case generate --nodes "$PY_NODES" --output "$gfb" >/dev/null
ns_now() { date +%s%N; }
median() { sort -n | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.0f (%.0f-%.0f)", m, v[1], v[NR]}'; }
# Runs `graphfuse apply` $2 times on $1; prints the wall times (ms) one a line and keeps
# the last run's "time: load ..." line in $DIR/phases.
gf_runs() {
  local in=$1 reps=$2 ext=${1##*.}
  for ((k = 0; k < reps; ++k)); do
    local t0; t0=$(ns_now)
    "$B/graphfuse" apply --rules rules/seed.yaml "$in" -o "$DIR/gf_out.$ext" --threads 2 | grep '^time:' >"$DIR/phases"
    echo $(( ($(ns_now) - t0) / 1000000 ))
  done
}
py_times=() py_parts=""
for ((k = 0; k < REPS; ++k)); do
  line=$(python3 bench/scale/seed_pass.py "$json" "$DIR/py_out.json" | head -1)
  py_parts="$py_parts$line"$'\n'
  py_times+=($(echo "$line" | sed -E 's/.*total ([0-9]+) ms.*/\1/'))
done
gf_gfb=$(gf_runs "$gfb" "$REPS" | median)
gfb_phases=$(cat "$DIR/phases")
gf_json=$(gf_runs "$json" "$JSON_REPS" | median)
json_phases=$(cat "$DIR/phases")
python3 bench/scale/seed_pass.py "$json" "$DIR/py_out.json" --check "$DIR/gf_out.json" | tail -1 >"$DIR/check"
nodes=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['nodes']))" "$json")
py=$(printf '%s\n' "${py_times[@]}" | median)
ratio() { awk -v a="${py%% *}" -v b="${1%% *}" 'BEGIN {printf "%.1fx", a / b}'; }
echo "Python baseline vs graphfuse apply, $nodes nodes, rules/seed.yaml only; median (fastest-slowest)"
echo "of $REPS runs ($JSON_REPS for graphfuse on JSON); the Python result is the same graph as graphfuse's"
echo "($(cat "$DIR/check")):"
echo
echo "| program | input | what is timed | ms | Python / this |"
echo "|---|---|---|---|---|"
echo "| python3 bench/scale/seed_pass.py | JSON | parse + pass + write (in-process timers) | $py | 1x |"
echo "| graphfuse apply --threads 2 | .gfb | the whole command: start, load, rewrite, save | $gf_gfb | $(ratio "$gf_gfb") |"
echo "| graphfuse apply --threads 2 | JSON | the whole command: start, load, rewrite, save | $gf_json | $(ratio "$gf_json") |"
echo
echo "Phases (last run): Python:"
printf '%s' "$py_parts" | sed 's/^/    /'
echo "graphfuse, .gfb: $gfb_phases"
echo "graphfuse, JSON: $json_phases"
rm -f "$json" "$gfb" "$DIR"/gf_out.* "$DIR/py_out.json" "$DIR/phases" "$DIR/check"
echo
echo "Load after: $(uptime)"
