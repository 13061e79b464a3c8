#!/usr/bin/env python3
"""The apply phase at 1 and 2 threads, next to what the machine gives two threads.

    bench/scale/apply_threads.py [BUILD_DIR] [--rounds N] [--dir DIR] [--nodes N] [--ceiling-reps N]
    cmake --build build --target scale_bench thread_ceiling_bench && bench/scale/apply_threads.py build

Issue 15's target is an apply phase (ordering, selecting, applying a round's matches)
1.6x faster at 2 threads than at 1. On a shared VM two threads' memory traffic does
not always scale: the same loop of random read-modify-writes runs 1.2x faster on two
threads in one minute and 1.9x in the next. So each round measures that first and
last (thread_ceiling_bench), and between them the apply phase at 1 and 2 threads on
the generated 10^6-node graph (default shape) and the wide one
(scale_bench --case rewrite ... --threads 1|2, `apply_ms`). The summary gives the
speed-ups over all rounds and over the rounds in which the machine gave two threads
at least 1.8x on the update loop, before and after. Per round, a one-thread run that
the host slowed (it has a slow mode, about twice the usual time) inflates that round's
speed-up, so the summary also sets the best one-thread time against the best
two-thread time.

Graphs of --nodes nodes (default 10^6) are generated into DIR (default
/tmp/graphfuse-scale) when missing. --ceiling-reps is thread_ceiling_bench's --reps
(default 3, about 11 s a call on a 2-vCPU VM).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CALM = 1.8  # the update loop's speed-up that counts as the machine scaling
SHAPES = ("default", "wide")  # scale_bench --shape cnn (the default) and wide


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"apply_threads.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def tool(build, name):
    return os.path.join(build, "bench", name)


def ceiling(build, reps):
    text = run([tool(build, "thread_ceiling_bench"), "--reps", str(reps)])
    found = dict(re.findall(r'kernel="(\w+)[^"]*".*?speedup=([0-9.]+)', text))
    if "update" not in found:
        sys.exit("apply_threads.py: thread_ceiling_bench printed no update loop:\n" + text)
    return float(found["update"])


def apply_ms(build, graph, threads):
    text = run([tool(build, "scale_bench"), "--case", "rewrite", "--input", graph, "--reps", "1",
                "--rules", os.path.join(ROOT, "rules", "seed.yaml"), "--threads", str(threads)])
    m = re.search(r" apply_ms=([0-9.]+)", text)
    if not m:
        sys.exit("apply_threads.py: scale_bench printed no apply_ms:\n" + text)
    return float(m.group(1))


def summary(name, rows):
    if not rows:
        print(f"{name}: no rounds")
        return
    parts = []
    for shape in SHAPES:
        t1 = statistics.median(r[shape][0] for r in rows)
        t2 = statistics.median(r[shape][1] for r in rows)
        ratios = [r[shape][0] / r[shape][1] for r in rows]
        b1 = min(r[shape][0] for r in rows)
        b2 = min(r[shape][1] for r in rows)
        parts.append(f"{shape} 1 thread {t1:.0f} ms, 2 threads {t2:.0f} ms (medians), speed-up per round median "
                     f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}), "
                     f"best against best {b1:.0f} / {b2:.0f} ms = {b1 / b2:.2f}x")
    print(f"{name} ({len(rows)} rounds): " + "; ".join(parts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--dir", default="/tmp/graphfuse-scale")
    ap.add_argument("--nodes", type=int, default=1000000)
    ap.add_argument("--ceiling-reps", type=int, default=3)
    a = ap.parse_args()
    for name in ("scale_bench", "thread_ceiling_bench"):
        if not os.access(tool(a.build, name), os.X_OK):
            sys.exit(f"apply_threads.py: {tool(a.build, name)} is missing "
                     f"(cmake --build {a.build} --target scale_bench thread_ceiling_bench)")
    if a.rounds < 1 or a.nodes < 1 or a.ceiling_reps < 1:
        sys.exit("apply_threads.py: --rounds, --nodes and --ceiling-reps take a positive number")
    os.makedirs(a.dir, exist_ok=True)
    graphs = {}
    for shape in SHAPES:
        path = os.path.join(a.dir, f"apply_threads_{shape}_{a.nodes}.gfb")
        if not os.path.exists(path):
            cmd = [tool(a.build, "scale_bench"), "--case", "generate", "--nodes", str(a.nodes),
                   "--output", path]
            run(cmd + (["--shape", "wide"] if shape == "wide" else []))
        graphs[shape] = path
    rows = []
    for k in range(a.rounds):
        before = ceiling(a.build, a.ceiling_reps)
        row = {shape: (apply_ms(a.build, g, 1), apply_ms(a.build, g, 2)) for shape, g in graphs.items()}
        after = ceiling(a.build, a.ceiling_reps)
        row["update"] = min(before, after)
        rows.append(row)
        print(f"round {k + 1}: update loop {before:.2f}x / {after:.2f}x; " +
              "; ".join(f"{s} {row[s][0]:.0f} / {row[s][1]:.0f} ms = {row[s][0] / row[s][1]:.2f}x"
                        for s in SHAPES), flush=True)
    summary("all", rows)
    summary(f"update loop >= {CALM}x before and after", [r for r in rows if r["update"] >= CALM])
    summary(f"update loop < {CALM}x", [r for r in rows if r["update"] < CALM])


if __name__ == "__main__":
    main()
