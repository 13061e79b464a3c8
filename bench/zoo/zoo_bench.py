#!/usr/bin/python3
"""The model zoo against ONNX Runtime: graphfuse's executor after rules/onnx vs onnxruntime-node.

    /usr/bin/python3 bench/zoo/zoo_bench.py [--graphfuse build/graphfuse] [--models a,b,...]
        [--threads 1,2] [--isa native,AVX2] [--repeat 3] [--runs 20] [--clock wall|cpu] [--zoo DIR] [--shared DIR]
        [--work DIR] [--targets] [--profile]

Per model, the rules are applied once (`graphfuse apply --rules rules/onnx`); then, per oneDNN
ISA and thread count, `graphfuse run REWRITTEN --bench RUNS --threads T` (the executor, fast
kernels; ONEDNN_MAX_CPU_ISA=<isa> unless native) and `node bench/zoo/ort_time.js ORIGINAL
--runs RUNS --threads T` (ONNX Runtime at its default level 'all', which fuses on its own)
alternate REPEAT times, the first of each pair switching every time, so that background load
hits both alike. Each figure is the median of the per-repeat medians, with their range; the
ratio is graphfuse / ONNX Runtime (below 1: graphfuse is faster). ONNX Runtime runs on the whole
CPU in every row: ONEDNN_MAX_CPU_ISA holds back graphfuse only.

--targets adds the cost-model table: per target, the model before and after the rules gated
by that target (`apply --target T`), timed by the target's runtime: onednn-cpu by graphfuse's
executor, ort-cpu by ONNX Runtime (whose own optimizer still runs at 'all'); and the default
rules (no target) in ONNX Runtime. after/before below 1 means the rules made it slower.

--profile prints graphfuse's per-op-type times (the last run's) under each row.

Models: resnet50, densenet121, efficientnet_b0, vit_b_16, bert_layer from --zoo
(bench/zoo/export_zoo.py writes them; default /work/gen/zoo) and resnet18, mobilenet_v2,
squeezenet1_1, transformer_encoder from --shared (default ../shared/models).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import sys

ZOO = ["resnet18", "mobilenet_v2", "squeezenet1_1", "resnet50", "densenet121", "efficientnet_b0", "vit_b_16",
       "bert_layer", "transformer_encoder"]
SHARED = {"resnet18", "mobilenet_v2", "squeezenet1_1", "transformer_encoder"}
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return p.stdout


def rules_args(a):
    return [x for r in a.rules for x in ("--rules", r)]


def rewritten(a, model, path, target=None):
    """The model after the rules (gated by `target`), written once per work dir."""
    out = os.path.join(a.work, f"{model}.{target or 'rules'}.onnx")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(a.graphfuse):
        cmd = [a.graphfuse, "apply", path, "-q", "-o", out] + rules_args(a)
        if target:
            cmd += ["--target", target]
        run(cmd)
    return out


class GfTimer:
    def __init__(self, a, isa):
        self.a = a
        self.env = dict(os.environ)
        self.env.pop("ONEDNN_MAX_CPU_ISA", None)
        if isa != "native":
            self.env["ONEDNN_MAX_CPU_ISA"] = isa
        self.isa_name = None
        self.profile = ""

    def __call__(self, path, threads):
        out = run([self.a.graphfuse, "run", path, "--bench", str(self.a.runs), "--threads", str(threads),
                   "--clock", self.a.clock], self.env)
        m = re.search(r"oneDNN ISA: (\S+)", out)
        if m:
            self.isa_name = m.group(1)
        m = re.search(r"median ([0-9.]+) ms", out)
        if not m:
            raise RuntimeError(f"no median in graphfuse run's output:\n{out}")
        self.profile = "\n".join(l for l in out.splitlines() if l.startswith("  "))
        return float(m.group(1))


def ort_time(a, path, threads):
    out = run(["node", os.path.join(HERE, "ort_time.js"), path, "--runs", str(a.runs), "--threads", str(threads),
               "--clock", a.clock])
    return float(re.search(r"median_ms=([0-9.]+)", out).group(1))


def interleaved(a, first, second):
    """REPEAT alternating pairs of (first(), second()); the per-repeat figures of each."""
    xs, ys = [], []
    for i in range(a.repeat):
        if i % 2 == 0:
            xs.append(first())
            ys.append(second())
        else:
            ys.append(second())
            xs.append(first())
    return xs, ys


def fmt(v):
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"


def model_path(a, m):
    return os.path.join(a.shared if m in SHARED else a.zoo, m + ".onnx")


def ratio_table(a, models):
    print("| model | oneDNN ISA (graphfuse) | threads | graphfuse ms | ONNX Runtime ms | graphfuse / ORT |")
    print("|---|---|---|---|---|---|")
    for m in models:
        orig = model_path(a, m)
        fused = rewritten(a, m, orig)
        for isa in a.isa:
            gf = GfTimer(a, isa)
            for t in a.threads:
                g, o = interleaved(a, lambda: gf(fused, t), lambda: ort_time(a, orig, t))
                r = statistics.median(g) / statistics.median(o)
                print(f"| {m} | {gf.isa_name or isa} | {t} | {fmt(g)} | {fmt(o)} | {r:.2f}x |", flush=True)
                if a.profile:
                    print(gf.profile, flush=True)


def target_table(a, models):
    print("| model | target | runtime | before ms | after ms | before / after |")
    print("|---|---|---|---|---|---|")
    t = a.threads[0]
    for m in models:
        orig = model_path(a, m)
        gf = GfTimer(a, "native")
        rows = [("onednn-cpu", "graphfuse", gf), ("ort-cpu", "onnxruntime", lambda p, th: ort_time(a, p, th)),
                (None, "onnxruntime", lambda p, th: ort_time(a, p, th))]
        for target, runtime, timer in rows:
            after = rewritten(a, m, orig, target)
            b, f = interleaved(a, lambda: timer(orig, t), lambda: timer(after, t))
            s = statistics.median(b) / statistics.median(f)
            print(f"| {m} | {target or 'none (default rules)'} | {runtime}, {t} thread(s) | {fmt(b)} | {fmt(f)} | "
                  f"{s:.2f}x |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graphfuse", default=os.path.join(ROOT, "build", "graphfuse"))
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--isa", default="native,AVX2", help="native and/or ONEDNN_MAX_CPU_ISA values")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="what a run is timed by on both sides: wall, or cpu (the process's CPU time; for 1 thread on a shared machine)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--zoo", default="/work/gen/zoo")
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--work", default="/tmp/zoo-bench")
    ap.add_argument("--rules", nargs="*", default=[os.path.join(ROOT, "rules", "onnx")])
    ap.add_argument("--targets", action="store_true", help="print the cost-model table instead of the ratio table")
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    a.threads = [int(x) for x in a.threads.split(",")]
    a.isa = a.isa.split(",")
    models = [m for m in a.models.split(",") if m]
    missing = [m for m in models if not os.path.exists(model_path(a, m))]
    if missing:
        sys.exit(f"zoo_bench: missing {', '.join(model_path(a, m) for m in missing)} "
                 "(bench/zoo/export_zoo.py makes the zoo's own models)")
    if not os.path.isdir(os.path.join(ROOT, "tests", "ort", "node_modules", "onnxruntime-node")):
        sys.exit("zoo_bench: onnxruntime-node is not installed (tests/ort/install.sh)")
    os.makedirs(a.work, exist_ok=True)
    a.graphfuse = os.path.abspath(a.graphfuse)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"zoo_bench: {a.repeat} interleaved repeats of {a.runs}-run medians; load average {load:.1f}")
    (target_table if a.targets else ratio_table)(a, models)


if __name__ == "__main__":
    main()
