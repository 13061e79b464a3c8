#!/usr/bin/python3
"""Transformer models through graphfuse and ONNX Runtime's transformers optimizer, side by side.

For every model: nodes (all but Constant) of the original, of ORT's optimizer output (read from
--ort-dir, written by ort_optimizer_peer.py), of `graphfuse apply --rules rules/onnx` and of the
same with `--target ort-cpu`; onnx.checker on each; the largest error against the original in
ONNX Runtime (seeded inputs; relative to each output's largest magnitude); and ORT latency (CPU,
--threads, interleaved runs, median) at ORT's levels disabled/basic/all.

    /usr/bin/python3 bench/transformers/compare.py --graphfuse build/graphfuse \\
        --ort-dir /work/gen/transformers/ort /work/gen/transformers/*.onnx

Dynamic-axis models run at --batch x --seq (default 4 x 128); fixed ones at their own shapes.
--check EXPECT.json turns it into a test (tests/transformers): only ORT level 'disabled' (fused
nodes run as written), no timing; exit 1 when an output fails to run, differs by more than
--tol, fails onnx.checker where EXPECT says it passes, or keeps more nodes than EXPECT's
"expect_at_most".
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VOCAB = 1000  # export_blocks.py's


def nodes(model):
    return sum(1 for n in model.graph.node if n.op_type != "Constant")


def checker(path):
    try:
        onnx.checker.check_model(onnx.load(path))
        return "ok"
    except Exception as e:  # the checker's verdict is data here
        return "FAIL: " + str(e).splitlines()[0][:100]


def make_feeds(model, batch, seq, work):
    """Seeded inputs by name: token ids < VOCAB, masks with a padded tail, positions 0..seq-1."""
    rng = np.random.default_rng(7)
    feeds = {}
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        t = inp.type.tensor_type
        shape = []
        for i, d in enumerate(t.shape.dim):
            shape.append(d.dim_value if d.HasField("dim_value") else (batch if i == 0 else seq))
        n = inp.name
        if t.elem_type == onnx.TensorProto.INT64:
            if n == "input_ids":
                a = rng.integers(0, VOCAB, shape, dtype=np.int64)
            elif n == "attention_mask":
                a = np.ones(shape, np.int64)
                a[-1, shape[1] - 3:] = 0
            elif n == "token_type_ids":
                a = np.zeros(shape, np.int64)
                a[:, shape[1] // 2:] = 1
            elif n == "position_ids":
                a = np.broadcast_to(np.arange(shape[1], dtype=np.int64), shape).copy()
            else:
                a = rng.integers(0, 2, shape, dtype=np.int64)
            dtype = "int64"
        elif t.elem_type == onnx.TensorProto.FLOAT:
            a, dtype = rng.standard_normal(shape).astype(np.float32), "float32"
        else:
            sys.exit("compare.py: input %s has element type %d (want float32/int64)" % (n, t.elem_type))
        f = os.path.join(work, n + ".bin")
        a.tofile(f)
        feeds[n] = {"dtype": dtype, "shape": list(shape), "file": f}
    return feeds


def graphfuse(gf, src, dst, target=None):
    cmd = [gf, "apply", "--rules", os.path.join(ROOT, "rules", "onnx"), src, "-o", dst, "-q"]
    if target:
        cmd += ["--target", target]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return "graphfuse failed: " + (r.stderr.strip().splitlines() or ["?"])[0][:200]
    return None


def ort_eval(spec, work):
    p = os.path.join(work, "spec.json")
    with open(p, "w") as f:
        json.dump(spec, f)
    r = subprocess.run(["node", os.path.join(HERE, "ort_eval.js"), p], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("compare.py: ort_eval.js failed: " + r.stderr.strip()[-500:])
    return json.loads(r.stdout)


def fmt_err(e):
    return e if isinstance(e, str) else "%.1e" % e


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphfuse", default=os.path.join(ROOT, "build", "graphfuse"))
    ap.add_argument("--ort-dir", help="ort_optimizer_peer.py's --out (its <name>.ort.onnx files)")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--levels", default="disabled,basic,all")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--check", help="expectations JSON: run as a test")
    ap.add_argument("--keep", help="write the graphfuse outputs into this folder")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    expect = None
    if a.check:
        with open(a.check) as f:
            expect = json.load(f)["models"]
        a.levels, a.runs = "disabled", 0
    levels = a.levels.split(",")
    failures = []
    for path in a.models:
        name = os.path.basename(path)
        with tempfile.TemporaryDirectory() as work:
            out_dir = a.keep or work
            os.makedirs(out_dir, exist_ok=True)
            orig = onnx.load(path)
            variants = [("original", path)]
            if a.ort_dir and os.path.isfile(os.path.join(a.ort_dir, name.replace(".onnx", ".ort.onnx"))):
                variants.append(("ort-optimizer", os.path.join(a.ort_dir, name.replace(".onnx", ".ort.onnx"))))
            for key, target in (("graphfuse", None), ("graphfuse --target ort-cpu", "ort-cpu")):
                if expect is not None and target:
                    continue
                dst = os.path.join(out_dir, name.replace(".onnx", ".gf%s.onnx" % ("-ort" if target else "")))
                err = graphfuse(a.graphfuse, path, dst, target)
                if err:
                    failures.append("%s: %s" % (name, err))
                    print("%s: %s" % (name, err))
                    continue
                variants.append((key, dst))
            spec = {"feeds": make_feeds(orig, a.batch, a.seq, work), "levels": levels,
                    "threads": a.threads, "runs": a.runs, "warmup": 0 if a.runs == 0 else 3,
                    "models": [{"key": k, "path": p} for k, p in variants]}
            res = ort_eval(spec, work)
            shape = " ".join("%s%s" % (n, f["shape"]) for n, f in spec["feeds"].items())
            print("\n### %s (%s; ORT CPU, %d thread%s, median of %d interleaved runs)\n"
                  % (name, shape, a.threads, "s" if a.threads > 1 else "", a.runs))
            head = "| model | nodes | onnx.checker | max rel. error | " + \
                   " | ".join("ms (%s)" % lv for lv in levels) + " |"
            print(head)
            print("|" + "---|" * (4 + len(levels)))
            for key, p in variants:
                m = onnx.load(p)
                n = nodes(m)
                ops = collections.Counter(x.op_type for x in m.graph.node if x.domain == "com.microsoft"
                                          or x.op_type in ("SimplifiedLayerNormalization", "LayerNormalization"))
                chk = checker(p)
                r = res.get(key, {})
                errs = [r[lv].get("rel_err", r[lv].get("error")) for lv in levels if lv in r]
                worst = max((e for e in errs if not isinstance(e, str)), default=None)
                bad = [e for e in errs if isinstance(e, str)]
                err_txt = bad[0] if bad else fmt_err(worst)
                times = " | ".join("%.3f" % r[lv]["median_ms"] if "median_ms" in r.get(lv, {}) else "-"
                                   for lv in levels)
                print("| %s | %d %s | %s | %s | %s |" % (key, n, dict(sorted(ops.items())) if ops else "",
                                                         chk, err_txt, times))
                if expect is not None and key == "graphfuse":
                    e = expect.get(name)
                    if e is None:
                        failures.append("%s: no entry in %s" % (name, a.check))
                        continue
                    if bad or worst is None or worst > a.tol:
                        failures.append("%s: graphfuse's output in ORT: %s (tolerance %g)" % (name, err_txt, a.tol))
                    if chk != "ok" and e.get("checker", True):
                        failures.append("%s: onnx.checker: %s" % (name, chk))
                    if n > e["expect_at_most"]:
                        failures.append("%s: %d nodes, expected at most %d (ORT's optimizer: %d)"
                                        % (name, n, e["expect_at_most"], e["ort_optimizer_nodes"]))
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
