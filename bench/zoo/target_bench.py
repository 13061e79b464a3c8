#!/usr/bin/python3
"""The cost model on whole models: each zoo model before and after the rules, per target, timed
by the runtime the target describes.

    /usr/bin/python3 bench/zoo/target_bench.py [--graphfuse build/graphfuse] [--models a,b,...]
        [--targets onednn-cpu,ort-cpu,none] [--repeat 3] [--runs 20] [--threads 1] [--clock cpu]
        [--zoo DIR] [--shared DIR] [--work DIR] [--rules DIR ...] [--profile]

Rows, per model:
- onednn-cpu: `graphfuse run MODEL --rules R --target onednn-cpu --bench RUNS` (graphfuse's
  executor, fast kernels; the rewrite and the fold happen in the process, before and after run
  interleaved run by run);
- ort-cpu: `graphfuse apply --target ort-cpu`, then `node bench/zoo/ort_time.js MODEL AFTER`
  (onnxruntime-node at its default level 'all', both sessions in one process, runs
  interleaved);
- none: the default rules (no target), timed in ONNX Runtime the same way;
- noise (not by default): the original against itself in ONNX Runtime, the noise floor.

Each of these is repeated REPEAT times as separate processes; a time is the median of the
per-process medians, with their range. `after speed` is before / after, per process (its runs
interleaved, a paired figure), then the median and range over the processes: below 1 the rules
made the model slower; the bar is 0.97. With --clock cpu (the default) a run is timed by the
process's CPU time, which on a shared, loaded machine measures what the kernels cost rather
than how often the scheduler runs us (use one thread). The load average is printed.

Models: resnet50, densenet121, efficientnet_b0, vit_b_16, bert_layer from --zoo
(bench/zoo/export_zoo.py writes them) and resnet18, mobilenet_v2, squeezenet1_1,
transformer_encoder from --shared (../shared/models).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ZOO = ["resnet18", "mobilenet_v2", "squeezenet1_1", "resnet50", "densenet121", "efficientnet_b0", "vit_b_16",
       "bert_layer", "transformer_encoder"]
SHARED = {"resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"}
BAR = 0.97


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def model_path(a, m):
    return os.path.join(a.shared if m in SHARED else a.zoo, m + ".onnx")


def rules_args(a):
    return [x for r in a.rules for x in ("--rules", r)]


def applied(a, model, path, target):
    """The model after the rules gated by `target` (None: no target), written once per binary."""
    out = os.path.join(a.work, f"{model}.{target or 'rules'}.onnx")
    if not os.path.exists(out) or os.path.getmtime(out) < max(os.path.getmtime(a.graphfuse), os.path.getmtime(path)):
        cmd = [a.graphfuse, "apply", path, "-q", "-o", out] + rules_args(a)
        if target:
            cmd += ["--target", target]
        run(cmd)
    return out


def graphfuse_pair(a, path, target):
    """One process: before and after medians (ms), rules applied, per-op lines of both."""
    out = run([a.graphfuse, "run", path, "--bench", str(a.runs), "--threads", str(a.threads), "--clock", a.clock,
               "--target", target] + rules_args(a))
    med = [float(x) for x in re.findall(r"rules: median ([0-9.]+) ms", out)]
    if len(med) != 2:
        raise RuntimeError(f"no before/after medians in graphfuse run's output:\n{out}")
    n = re.search(r"rules applied: (.*)", out)
    return med[0], med[1], sum(int(x) for x in re.findall(r" (\d+)", " " + n.group(1))) if n else -1, out


def ort_pair(a, before, after, flip):
    paths = [after, before] if flip else [before, after]
    out = run(["node", os.path.join(HERE, "ort_time.js")] + paths +
              ["--runs", str(a.runs), "--threads", str(a.threads), "--clock", a.clock])
    med = [float(x) for x in re.findall(r"median_ms=([0-9.]+)", out)]
    if len(med) != 2:
        raise RuntimeError(f"no medians in ort_time.js's output:\n{out}")
    return (med[1], med[0]) if flip else (med[0], med[1])


def fmt(v):
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"


def row(a, m, target):
    orig = model_path(a, m)
    bs, fs, note, last = [], [], "", ""
    if target == "onednn-cpu":
        runtime = "graphfuse"
        for _ in range(a.repeat):
            b, f, n, last = graphfuse_pair(a, orig, target)
            bs.append(b)
            fs.append(f)
            note = f"{n} rewrites"
    elif target == "noise":
        # The original against itself in ORT: how far a ratio moves when nothing changed.
        runtime = "onnxruntime"
        for i in range(a.repeat):
            b, f = ort_pair(a, orig, orig, i % 2 == 1)
            bs.append(b)
            fs.append(f)
    else:
        runtime = "onnxruntime"
        after = applied(a, m, orig, None if target == "none" else target)
        for i in range(a.repeat):
            b, f = ort_pair(a, orig, after, i % 2 == 1)
            bs.append(b)
            fs.append(f)
    # Each process's before and after ran interleaved, so their ratio is a paired figure:
    # the median of the per-process ratios, with their range.
    ratios = [b / f for b, f in zip(bs, fs)]
    speed = statistics.median(ratios)
    verdict = "ok" if speed >= BAR else "SLOWER"
    label = {"none": "none (default rules)", "noise": "noise (original vs itself)"}.get(target, target)
    print(f"| {m} | {label} | {runtime} | {fmt(bs)} | {fmt(fs)} | {speed:.3f}x ({min(ratios):.3f}-{max(ratios):.3f}) "
          f"| {verdict} | {note} |", flush=True)
    if a.profile and last:
        print("\n".join("    " + l for l in last.splitlines() if l.startswith(("  ", "before", "after"))), flush=True)
    return speed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphfuse", default=os.path.join(ROOT, "build", "graphfuse"))
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--targets", default="onednn-cpu,ort-cpu,none")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    ap.add_argument("--zoo", default="/work/gen/zoo")
    # ../shared next to the checkout; a worktree under ../wt/NAME finds it two levels up.
    shared = [os.path.join(ROOT, *up, "shared", "models") for up in ([".."], ["..", ".."])]
    ap.add_argument("--shared", default=next((d for d in shared if os.path.isdir(d)), shared[0]))
    ap.add_argument("--work", default="/tmp/target-bench")
    ap.add_argument("--rules", nargs="*", default=[os.path.join(ROOT, "rules", "onnx")])
    ap.add_argument("--profile", action="store_true", help="graphfuse's per-op-type times under onednn-cpu rows")
    a = ap.parse_args()
    models = [m for m in a.models.split(",") if m]
    targets = [t for t in a.targets.split(",") if t]
    for t in targets:
        if t not in ("onednn-cpu", "ort-cpu", "none", "noise"):
            sys.exit(f"target_bench: unknown target {t} (onednn-cpu, ort-cpu, none or noise)")
    missing = [model_path(a, m) for m in models if not os.path.exists(model_path(a, m))]
    if missing:
        sys.exit(f"target_bench: missing {', '.join(missing)} (bench/zoo/export_zoo.py makes the zoo's own models)")
    if any(t != "onednn-cpu" for t in targets) and \
            not os.path.isdir(os.path.join(ROOT, "tests", "ort", "node_modules", "onnxruntime-node")):
        sys.exit("target_bench: onnxruntime-node is not installed (tests/ort/install.sh)")
    a.graphfuse = os.path.abspath(a.graphfuse)
    if not os.path.exists(a.graphfuse):
        sys.exit(f"target_bench: no graphfuse at {a.graphfuse}")
    os.makedirs(a.work, exist_ok=True)
    isa = re.search(r"oneDNN ISA: (.*)", run([a.graphfuse, "run", model_path(a, models[0]), "--bench", "1",
                                               "--threads", "1"]))
    print(f"target_bench: {a.repeat} processes x {a.runs} interleaved runs, medians, {a.clock} time, "
          f"{a.threads} thread(s); graphfuse oneDNN ISA {isa.group(1) if isa else '?'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| model | target | runtime | before ms | after ms | after speed | >= 0.97 | |")
    print("|---|---|---|---|---|---|---|---|")
    slow = []
    for m in models:
        for t in targets:
            if row(a, m, t) < BAR:
                slow.append(f"{m}/{t}")
    print(f"target_bench: load average {os.getloadavg()[0]:.1f}; "
          + (f"slower than {BAR}x: {', '.join(slow)}" if slow else f"every row at least {BAR}x"))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
