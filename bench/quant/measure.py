#!/usr/bin/python3
"""Measures issue 44's acceptance figures on quantized models: for each QDQ file, graphfuse
applies the rules; ONNX Runtime (onnxruntime-node, 1 thread) runs the original at level
disabled (the reference) and extended, and graphfuse's output at disabled and extended. Prints
one markdown row per file: the quantized compute ops in graphfuse's output, in ORT's extended
graph of the original and of graphfuse's output; the largest output difference from the
reference relative to the reference's largest magnitude; with --bench N the median latency of
N interleaved runs.

usage: /usr/bin/python3 bench/quant/measure.py [--graphfuse build/graphfuse] [--rules rules/onnx]
           [--bench N] [--work DIR] [--float DIR] QDQ.onnx ...
A file named M.STYLE.onnx is timed beside the float model DIR/M.onnx when --float is given.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
QUANTIZED = {"QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger", "QGemm", "QLinearAdd",
             "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearGlobalAveragePool",
             "QLinearAveragePool", "QLinearConcat", "QLinearSoftmax", "MatMulIntegerToFloat",
             "DynamicQuantizeMatMul", "QAttention", "QLinearReduceMean", "QLinearWhere"}


def quantized_ops(path):
    if not os.path.exists(path):
        return None
    counts = {}
    for n in onnx.load(path, load_external_data=False).graph.node:
        if n.op_type in QUANTIZED:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return counts


def fmt_counts(c):
    if c is None:
        return "-"
    total = sum(c.values())
    short = {"QLinearConv": "Conv", "QLinearMatMul": "MatMul", "MatMulIntegerToFloat": "MMI2F",
             "QLinearGlobalAveragePool": "GAP", "DynamicQuantizeMatMul": "DQMatMul"}
    parts = " ".join(f"{short.get(k, k.replace('QLinear', ''))}:{v}" for k, v in sorted(c.items()))
    return f"{total} ({parts})" if parts else "0"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--graphfuse", default="build/graphfuse")
    ap.add_argument("--rules", action="append", help="rule files or directories (default rules/onnx)")
    ap.add_argument("--bench", type=int, default=0)
    ap.add_argument("--work", default="/tmp/graphfuse-quant")
    ap.add_argument("--float", help="directory of the float models, timed beside")
    ap.add_argument("--json", help="write every figure here too")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless, for every file, ORT at extended makes at least as many of each "
                         "quantized op on graphfuse's output as on the original, and graphfuse's output "
                         "agrees with the reference no worse than ORT's own fusion (+1e-6)")
    a = ap.parse_args()
    rules = a.rules or ["rules/onnx"]
    os.makedirs(a.work, exist_ok=True)
    rows, everything, failures = [], {}, 0
    for model in a.models:
        base = os.path.basename(model)[:-len(".onnx")]
        w = os.path.join(a.work, base)
        gf = w + ".gf.onnx"
        cmd = [a.graphfuse, "apply", model, "-o", gf, "-q"]
        for r in rules:
            cmd += ["--rules", r]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(f"{base}: graphfuse apply failed: {r.stderr.strip()[:400]}\n")
            continue
        g = onnx.load(model, load_external_data=False).graph
        inits = {t.name for t in g.initializer}
        inp = [i for i in g.input if i.name not in inits][0]
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in inp.type.tensor_type.shape.dim]
        xfile = w + ".input.bin"
        np.random.default_rng(7).standard_normal(shape).astype(np.float32).tofile(xfile)
        runs = [
            {"key": "ref", "model": model, "level": "disabled", "optimized": None},
            {"key": "ort_ext", "model": model, "level": "extended", "optimized": w + ".ort_ext.onnx"},
            {"key": "gf_dis", "model": gf, "level": "disabled", "optimized": None},
            {"key": "gf_ext", "model": gf, "level": "extended", "optimized": w + ".gf_ext.onnx"},
        ]
        stem = base.rsplit(".", 1)[0]
        if a.float and os.path.exists(os.path.join(a.float, stem + ".onnx")):
            runs.append({"key": "float_ext", "model": os.path.join(a.float, stem + ".onnx"),
                         "level": "extended", "optimized": None})
        for x in runs:
            x["output"] = f"{w}.{x['key']}.out.bin"
        spec = w + ".spec.json"
        with open(spec, "w") as f:
            json.dump({"input": {"file": xfile, "shape": shape}, "bench": a.bench, "runs": runs}, f)
        res = w + ".result.json"
        if subprocess.run(["node", os.path.join(HERE, "judge.js"), spec, res]).returncode != 0:
            sys.stderr.write(f"{base}: judge failed\n")
            continue
        with open(res) as f:
            out = json.load(f)
        ref = np.fromfile(w + ".ref.out.bin", np.float32) if out.get("ref", {}).get("ok") else None
        fig = {"gf": quantized_ops(gf), "ort_ext": quantized_ops(w + ".ort_ext.onnx"),
               "gf_ext": quantized_ops(w + ".gf_ext.onnx")}
        for k in ("ort_ext", "gf_dis", "gf_ext"):
            if ref is None or not out.get(k, {}).get("ok"):
                fig["err_" + k] = out.get(k, {}).get("error", "no reference")
                continue
            y = np.fromfile(f"{w}.{k}.out.bin", np.float32)
            fig["err_" + k] = float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-30))
        for k in ("ort_ext", "gf_dis", "gf_ext", "float_ext"):
            t = out.get(k, {}).get("times")
            if t:
                fig["ms_" + k] = float(np.median(t))
        everything[base] = fig

        def e(k):
            v = fig.get("err_" + k)
            return f"{v:.4f}" if isinstance(v, float) else f"FAIL {str(v)[:60]}"

        def ms(k):
            v = fig.get("ms_" + k)
            return f"{v:.2f}" if v is not None else "-"

        rows.append(f"| {base} | {fmt_counts(fig['gf'])} | {fmt_counts(fig['ort_ext'])} | "
                    f"{fmt_counts(fig['gf_ext'])} | {e('ort_ext')} | {e('gf_dis')} | {e('gf_ext')} | "
                    f"{ms('float_ext')} | {ms('ort_ext')} | {ms('gf_dis')} | {ms('gf_ext')} |")
        print(rows[-1], flush=True)
        if a.check:
            failures += check(base, fig)
    print("| file | graphfuse | ORT ext on original | ORT ext on graphfuse | err ORT ext | err gf@disabled | "
          "err gf@ext | ms float@ext | ms orig@ext | ms gf@disabled | ms gf@ext |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(everything, f, indent=1)
    if a.check and (failures or len(everything) != len(a.models)):
        print(f"FAILED: {failures} checks, {len(a.models) - len(everything)} files not measured")
        sys.exit(1)


def check(base, fig):
    bad = []
    before, after = fig["ort_ext"] or {}, fig["gf_ext"] or {}
    for op, n in before.items():
        if after.get(op, 0) < n:
            bad.append(f"ORT makes {after.get(op, 0)} {op} on graphfuse's output, {n} on the original")
    ref = fig.get("err_ort_ext")
    for k in ("gf_dis", "gf_ext"):
        e = fig.get("err_" + k)
        if not isinstance(e, float) or not isinstance(ref, float):
            bad.append(f"{k}: no result ({e if not isinstance(e, float) else ref})")
        elif e > ref + 1e-6:
            bad.append(f"{k}: relative error {e:.6f} above ORT's own fusion's {ref:.6f}")
    for b in bad:
        print(f"FAIL {base}: {b}")
    return len(bad)


if __name__ == "__main__":
    main()
