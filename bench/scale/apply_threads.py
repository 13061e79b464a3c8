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

The two vCPUs of such a VM do not always run at the same speed either: in some minutes
a one-thread run pinned to one of them takes twice as long as on the other, and which
one is slow changes. So each round also runs the one-thread apply phase pinned to each
of the first two CPUs (taskset, util-linux) and gives what they allow together: the
time two threads would take if each ran at its vCPU's one-thread speed and they shared
the work perfectly (1 / (1/a + 1/b): the two vCPUs' capacity), and the two-thread run
against it. A program that scales perfectly scores 1.00 there, whatever the host does;
and the one-thread time over the capacity is the most any program could gain from the
second thread in that round. Left out where fewer than two CPUs are allowed or taskset
is missing.

Graphs of --nodes nodes (default 10^6) are generated into DIR (default
/tmp/graphfuse-scale) when missing. --ceiling-reps is thread_ceiling_bench's --reps
(default 3, about 11 s a call on a 2-vCPU VM).
"""
import argparse
import os
import re
import shutil
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


def apply_ms(build, graph, threads, cpu=None):
    pin = ["taskset", "-c", str(cpu)] if cpu is not None else []
    text = run(pin + [tool(build, "scale_bench"), "--case", "rewrite", "--input", graph, "--reps", "1",
                      "--rules", os.path.join(ROOT, "rules", "seed.yaml"), "--threads", str(threads)])
    m = re.search(r" apply_ms=([0-9.]+)", text)
    if not m:
        sys.exit("apply_threads.py: scale_bench printed no apply_ms:\n" + text)
    return float(m.group(1))


def capacity(pinned):
    """Two threads' time at the two vCPUs' one-thread speeds, the work shared perfectly."""
    return 1.0 / (1.0 / pinned[0] + 1.0 / pinned[1])


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
        part = (f"{shape} 1 thread {t1:.0f} ms, 2 threads {t2:.0f} ms (medians), speed-up per round median "
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}), "
                f"best against best {b1:.0f} / {b2:.0f} ms = {b1 / b2:.2f}x")
        if "pinned" in rows[0]:
            alone = [statistics.median(r["pinned"][shape][k] for r in rows) for k in (0, 1)]
            caps = [capacity(r["pinned"][shape]) for r in rows]
            share = [c / r[shape][1] for c, r in zip(caps, rows)]
            room = [r[shape][0] / c for c, r in zip(caps, rows)]
            part += (f"; vCPUs alone {alone[0]:.0f} / {alone[1]:.0f} ms (medians), 2 threads at "
                     f"{statistics.median(share):.2f} of their capacity ({min(share):.2f}-{max(share):.2f}), "
                     f"the most a second thread could give {statistics.median(room):.2f}x (median)")
        parts.append(part)
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
    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2 or not shutil.which("taskset"):
        print("apply_threads.py: fewer than two CPUs allowed, or no taskset: no pinned runs")
        cpus = []
    rows = []
    for k in range(a.rounds):
        before = ceiling(a.build, a.ceiling_reps)
        row = {shape: (apply_ms(a.build, g, 1), apply_ms(a.build, g, 2)) for shape, g in graphs.items()}
        if cpus:
            row["pinned"] = {shape: [apply_ms(a.build, g, 1, cpu) for cpu in cpus] for shape, g in graphs.items()}
        after = ceiling(a.build, a.ceiling_reps)
        row["update"] = min(before, after)
        rows.append(row)
        parts = []
        for s in SHAPES:
            part = f"{s} {row[s][0]:.0f} / {row[s][1]:.0f} ms = {row[s][0] / row[s][1]:.2f}x"
            if cpus:
                p = row["pinned"][s]
                part += (f" (vCPUs {cpus[0]} / {cpus[1]} alone {p[0]:.0f} / {p[1]:.0f} ms, capacity "
                         f"{capacity(p):.0f} ms, 2 threads at {capacity(p) / row[s][1]:.2f} of it)")
            parts.append(part)
        print(f"round {k + 1}: update loop {before:.2f}x / {after:.2f}x; " + "; ".join(parts), flush=True)
    summary("all", rows)
    summary(f"update loop >= {CALM}x before and after", [r for r in rows if r["update"] >= CALM])
    summary(f"update loop < {CALM}x", [r for r in rows if r["update"] < CALM])


if __name__ == "__main__":
    main()
