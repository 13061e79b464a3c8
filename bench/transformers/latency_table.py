#!/usr/bin/python3
"""The latency acceptance table of issue 42: ONNX Runtime (CPU, --threads, interleaved runs,
median) per model and ORT level (disabled, basic, all) for the original, ORT's transformers
optimizer output (--ort-dir), `graphfuse apply --rules rules/onnx` and the same with
`--target ort-cpu`, with each graphfuse output's ratio to the faster of the original and ORT's
output at that level, and the verdicts the issue asks for:

  default rules at level 'all' never slower than the original nor ORT's output (within --tol, 3%);
  --target ort-cpu at every level at least as fast as both (within --tol).

    /usr/bin/python3 bench/transformers/latency_table.py --ort-dir /work/gen/transformers/ort \\
        --runs 30 /work/gen/transformers/*.onnx ../shared/models/transformer_encoder.onnx

Dynamic-axis models run at --batch x --seq (default 4 x 128), fixed ones at their own shapes.
All four forms of one model run interleaved in one ORT process (A, B, C, D, A, B, ...), so load
on a shared machine hits them alike; the ratios are the figures to trust, not the absolutes.
Each form runs at least --runs times and until it has run --min-ms in all (default 300 ms), so
the 0.2 ms fixed-shape files get about 1,500 samples and one descheduling cannot move a median.
"""
import argparse
import os
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (same folder: graphfuse runs, feeds, ort_eval)

KEYS = [("original", "original"), ("ort-optimizer", "ORT opt."), ("graphfuse", "graphfuse"),
        ("graphfuse --target ort-cpu", "gf ort-cpu")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphfuse", default=os.path.join(compare.ROOT, "build", "graphfuse"))
    ap.add_argument("--ort-dir", required=True, help="ort_optimizer_peer.py's --out (<name>.ort.onnx files)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30, help="interleaved runs per form, at least")
    ap.add_argument("--min-ms", type=float, default=300,
                    help="more runs until each form ran this long in all (a 0.2 ms model needs 1,500 runs for 300 ms)")
    ap.add_argument("--levels", default="disabled,basic,all")
    ap.add_argument("--tol", type=float, default=0.03, help="allowed slowdown, as a fraction")
    ap.add_argument("--stat", choices=["median", "min"], default="median",
                    help="per-form statistic of the interleaved runs (min: the least disturbed run, for a loaded machine)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    levels = a.levels.split(",")
    print("ONNX Runtime CPU, %d thread%s, %s of at least %d interleaved runs and %g ms per form; dynamic models at %d x %d."
          % (a.threads, "s" if a.threads > 1 else "", a.stat, a.runs, a.min_ms, a.batch, a.seq))
    print("ratio = graphfuse output / min(original, ORT optimizer) at that level (> 1: slower).\n")
    print("| model | level | " + " | ".join("%s ms" % label for _, label in KEYS) +
          " | graphfuse ratio | gf ort-cpu ratio |")
    print("|---|---|" + "---|" * (len(KEYS) + 2))
    misses = []
    for path in a.models:
        name = os.path.basename(path)
        ort_path = os.path.join(a.ort_dir, name.replace(".onnx", ".ort.onnx"))
        with tempfile.TemporaryDirectory() as work:
            variants = [("original", path)]
            if os.path.isfile(ort_path):
                variants.append(("ort-optimizer", ort_path))
            for key, target in (("graphfuse", None), ("graphfuse --target ort-cpu", "ort-cpu")):
                dst = os.path.join(work, key.replace(" ", "_").replace("-", "") + ".onnx")
                err = compare.graphfuse(a.graphfuse, path, dst, target)
                if err:
                    sys.exit("latency_table.py: %s: %s" % (name, err))
                variants.append((key, dst))
            spec = {"feeds": compare.make_feeds(onnx.load(path), a.batch, a.seq, work), "levels": levels,
                    "threads": a.threads, "runs": a.runs, "min_ms": a.min_ms, "warmup": 3,
                    "models": [{"key": k, "path": p} for k, p in variants]}
            res = compare.ort_eval(spec, work)
        for lv in levels:
            ms = {k: res.get(k, {}).get(lv, {}).get(a.stat + "_ms") for k, _ in KEYS}
            peers = [ms[k] for k in ("original", "ort-optimizer") if ms[k] is not None]
            best = min(peers) if peers else None

            def ratio(k):
                return ms[k] / best if best and ms[k] is not None else None
            cells = ["%.3f" % ms[k] if ms[k] is not None else "-" for k, _ in KEYS]
            rg, rc = ratio("graphfuse"), ratio("graphfuse --target ort-cpu")
            print("| %s | %s | %s | %s | %s |" % (name, lv, " | ".join(cells),
                                                  "%.2f" % rg if rg else "-", "%.2f" % rc if rc else "-"), flush=True)
            if lv == "all" and rg and rg > 1 + a.tol:
                misses.append("%s: default rules at 'all' %.2fx the faster peer" % (name, rg))
            if rc and rc > 1 + a.tol:
                misses.append("%s: --target ort-cpu at '%s' %.2fx the faster peer" % (name, lv, rc))
    print("\nOutside the %.0f%% tolerance: %d" % (100 * a.tol, len(misses)))
    for m in misses:
        print("  " + m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
