#!/usr/bin/python3
"""Target truth for ONNX Runtime's CPU provider: each fused transformer op against its unfused form.

Builds tiny single-op models (onnx.helper), the fused com.microsoft/ONNX-domain op and the
standard-op subgraph it replaces, at BERT/GPT-2 (hidden 768) and Llama (hidden 2048) sizes,
and times them in onnxruntime-node (bench/transformers/ort_eval.js: interleaved runs, median,
outputs compared) at 1 and 2 threads. ORT level 'disabled' runs each form as written; at 'all'
ORT may fuse the unfused form itself. Prints fused/unfused latency ratios (> 1: the fused op is
slower).

    /usr/bin/python3 bench/transformers/op_truth.py [--threads 1,2] [--levels disabled,all]
        [--sizes 1x32,4x128,4x512] [--ops SkipLayerNormalization,...] [--runs 30]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
MS = "com.microsoft"


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def rms_decomposed(x, w, out, eps, p):
    """Llama's RMSNorm as torch exports it: Pow, ReduceMean, Add, Sqrt, Div(1, .), Mul, Mul."""
    return [
        helper.make_node("Pow", [x, p + "two"], [p + "sq"]),
        helper.make_node("ReduceMean", [p + "sq"], [p + "ms"], axes=[-1], keepdims=1),
        helper.make_node("Add", [p + "ms", p + "eps"], [p + "mse"]),
        helper.make_node("Sqrt", [p + "mse"], [p + "rt"]),
        helper.make_node("Div", [p + "one", p + "rt"], [p + "inv"]),
        helper.make_node("Mul", [x, p + "inv"], [p + "xn"]),
        helper.make_node("Mul", [w, p + "xn"], [out]),
    ], [const(p + "two", 2.0), const(p + "eps", eps), const(p + "one", 1.0)]


def ln_decomposed(x, gamma, beta, out, eps, p):
    """A last-axis layer norm as exporters write it before opset 17 (torch at opset 14: ViT)."""
    return [
        helper.make_node("ReduceMean", [x], [p + "mean"], axes=[-1], keepdims=1),
        helper.make_node("Sub", [x, p + "mean"], [p + "d"]),
        helper.make_node("Pow", [p + "d", p + "two"], [p + "sq"]),
        helper.make_node("ReduceMean", [p + "sq"], [p + "var"], axes=[-1], keepdims=1),
        helper.make_node("Add", [p + "var", p + "eps"], [p + "ve"]),
        helper.make_node("Sqrt", [p + "ve"], [p + "std"]),
        helper.make_node("Div", [p + "d", p + "std"], [p + "n"]),
        helper.make_node("Mul", [p + "n", gamma], [p + "sc"]),
        helper.make_node("Add", [p + "sc", beta], [out]),
    ], [const(p + "two", 2.0), const(p + "eps", eps)]


def tanh_gelu(x, out, p):
    """GPT-2's tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return [
        helper.make_node("Pow", [x, p + "three"], [p + "x3"]),
        helper.make_node("Mul", [p + "x3", p + "c"], [p + "cx3"]),
        helper.make_node("Add", [x, p + "cx3"], [p + "in"]),
        helper.make_node("Mul", [p + "in", p + "k"], [p + "kin"]),
        helper.make_node("Tanh", [p + "kin"], [p + "t"]),
        helper.make_node("Add", [p + "t", p + "one"], [p + "t1"]),
        helper.make_node("Mul", [x, p + "half"], [p + "hx"]),
        helper.make_node("Mul", [p + "hx", p + "t1"], [out]),
    ], [const(p + "three", 3.0), const(p + "c", 0.044715), const(p + "k", np.sqrt(2 / np.pi)),
        const(p + "one", 1.0), const(p + "half", 0.5)]


def erf_gelu(x, out, p):
    return [
        helper.make_node("Div", [x, p + "sqrt2"], [p + "xs"]),
        helper.make_node("Erf", [p + "xs"], [p + "e"]),
        helper.make_node("Add", [p + "e", p + "one"], [p + "e1"]),
        helper.make_node("Mul", [x, p + "e1"], [p + "xe"]),
        helper.make_node("Mul", [p + "xe", p + "half"], [out]),
    ], [const(p + "sqrt2", np.sqrt(2.0)), const(p + "one", 1.0), const(p + "half", 0.5)]


def pair(op, b, s, h, heads, rng):
    """(fused model, unfused model, feeds {name: array}) for one op at batch b, seq s, hidden h."""
    x = vi("x", [b, s, h])
    y = vi("y", None)
    gamma = const("gamma", 1 + 0.1 * rng.standard_normal(h))
    beta = const("beta", 0.1 * rng.standard_normal(h))
    bias = const("bias", 0.1 * rng.standard_normal(h))
    feeds = {"x": rng.standard_normal((b, s, h)).astype(np.float32)}
    if op == "SkipLayerNormalization":
        feeds["skip"] = rng.standard_normal((b, s, h)).astype(np.float32)
        ins = [x, vi("skip", [b, s, h])]
        fused = model([helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"],
                                        domain=MS, epsilon=1e-5)], ins, [y], [gamma, beta])
        unfused = model([helper.make_node("Add", ["x", "skip"], ["sum"]),
                         helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"],
                                          axis=-1, epsilon=1e-5)], ins, [y], [gamma, beta])
    elif op in ("SkipLayerNormalizationDecomposed", "SkipLayerNormalizationDecomposedSum"):
        # rules/onnx/layernorm.yaml's onnx_skip_layernorm_decomposed at opset 14 (no
        # LayerNormalization): the residual Add and the ten-node norm. ...Sum is the pre-LN block
        # (ViT, GPT-2): the residual sum is read on, and becomes the fused node's output 3
        # (onnx_skip_layernorm_sum).
        with_sum = op.endswith("Sum")
        feeds["skip"] = rng.standard_normal((b, s, h)).astype(np.float32)
        ins = [x, vi("skip", [b, s, h])]
        outs = [y] + ([vi("sum", None)] if with_sum else [])
        fused = model([helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"],
                                        ["y", "", "", "sum"] if with_sum else ["y"], domain=MS, epsilon=1e-5)],
                      ins, outs, [gamma, beta], opset=14)
        nodes, inits = ln_decomposed("sum", "gamma", "beta", "y", 1e-5, "l_")
        unfused = model([helper.make_node("Add", ["x", "skip"], ["sum"])] + nodes, ins, outs,
                        [gamma, beta] + inits, opset=14)
    elif op == "SkipSimplifiedLayerNormalization":
        feeds["skip"] = rng.standard_normal((b, s, h)).astype(np.float32)
        ins = [x, vi("skip", [b, s, h])]
        fused = model([helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma"], ["y"],
                                        domain=MS, epsilon=1e-6)], ins, [y], [gamma])
        nodes, inits = rms_decomposed("sum", "gamma", "y", 1e-6, "r_")
        unfused = model([helper.make_node("Add", ["x", "skip"], ["sum"])] + nodes, ins, [y], [gamma] + inits)
    elif op == "SimplifiedLayerNormalization":
        fused = model([helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                                        axis=-1, epsilon=1e-6)], [x], [y], [gamma])
        nodes, inits = rms_decomposed("x", "gamma", "y", 1e-6, "r_")
        unfused = model(nodes, [x], [y], [gamma] + inits)
    elif op == "SelfSkipSimplifiedLayerNormalization":
        # rmsnorm.yaml's checker-valid form of a norm without a residual: SkipSimplified(x, x)
        # with 4 x epsilon, against the ONNX-domain SimplifiedLayerNormalization it replaces.
        fused = model([helper.make_node("SkipSimplifiedLayerNormalization", ["x", "x", "gamma"], ["y"],
                                        domain=MS, epsilon=4e-6)], [x], [y], [gamma])
        unfused = model([helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                                          axis=-1, epsilon=1e-6)], [x], [y], [gamma])
    elif op == "SkipLayerNormalizationBroadcast":
        # GPT-2's first norm: token embeddings + a [1, S, H] position term (skip broadcast over the batch).
        feeds["skip"] = rng.standard_normal((1, s, h)).astype(np.float32)
        ins = [x, vi("skip", [1, s, h])]
        fused = model([helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"],
                                        domain=MS, epsilon=1e-5)], ins, [y], [gamma, beta])
        unfused = model([helper.make_node("Add", ["x", "skip"], ["sum"]),
                         helper.make_node("LayerNormalization", ["sum", "gamma", "beta"], ["y"],
                                          axis=-1, epsilon=1e-5)], ins, [y], [gamma, beta])
    elif op == "FastGelu":
        fused = model([helper.make_node("FastGelu", ["x"], ["y"], domain=MS)], [x], [y], [])
        nodes, inits = tanh_gelu("x", "y", "g_")
        unfused = model(nodes, [x], [y], inits)
    elif op == "BiasFastGelu":
        fused = model([helper.make_node("FastGelu", ["x", "bias"], ["y"], domain=MS)], [x], [y], [bias])
        nodes, inits = tanh_gelu("xb", "y", "g_")
        unfused = model([helper.make_node("Add", ["x", "bias"], ["xb"])] + nodes, [x], [y], [bias] + inits)
    elif op == "BiasGelu":
        fused = model([helper.make_node("BiasGelu", ["x", "bias"], ["y"], domain=MS)], [x], [y], [bias])
        nodes, inits = erf_gelu("xb", "y", "g_")
        unfused = model([helper.make_node("Add", ["x", "bias"], ["xb"])] + nodes, [x], [y], [bias] + inits)
    elif op == "Attention":
        # BERT self-attention: packed QKV weight, additive mask from a 0/1 mask.
        d = h // heads
        w = const("w", 0.05 * rng.standard_normal((h, 3 * h)))
        wb = const("wb", 0.05 * rng.standard_normal(3 * h))
        feeds["mask"] = np.ones((b, s), np.int32)
        feeds["mask"][-1, s - 3:] = 0
        ins = [x, helper.make_tensor_value_info("mask", TensorProto.INT32, [b, s])]
        fused = model([helper.make_node("Attention", ["x", "w", "wb", "mask"], ["y"], domain=MS,
                                        num_heads=heads)], ins, [y], [w, wb])
        shp = numpy_helper.from_array(np.array([b, s, heads, d], np.int64), "shp")
        oshp = numpy_helper.from_array(np.array([b, s, h], np.int64), "oshp")
        nodes = [helper.make_node("MatMul", ["x", "w"], ["qkv0"]),
                 helper.make_node("Add", ["qkv0", "wb"], ["qkv"]),
                 helper.make_node("Split", ["qkv", "split"], ["q0", "k0", "v0"], axis=2)]
        for t, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
            nodes += [helper.make_node("Reshape", [t + "0", "shp"], [t + "1"]),
                      helper.make_node("Transpose", [t + "1"], [t], perm=perm)]
        nodes += [helper.make_node("MatMul", ["q", "k"], ["qk"]),
                  helper.make_node("Mul", ["qk", "scale"], ["qks"]),
                  helper.make_node("Cast", ["mask"], ["maskf"], to=F),
                  helper.make_node("Unsqueeze", ["maskf", "ax12"], ["mask4"]),
                  helper.make_node("Sub", ["one", "mask4"], ["inv"]),
                  helper.make_node("Mul", ["inv", "neg"], ["madd"]),
                  helper.make_node("Add", ["qks", "madd"], ["sc"]),
                  helper.make_node("Softmax", ["sc"], ["p"], axis=-1),
                  helper.make_node("MatMul", ["p", "v"], ["ctx"]),
                  helper.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["ctxt", "oshp"], ["y"])]
        unfused = model(nodes, ins, [y], [w, wb, shp, oshp, const("scale", 1 / np.sqrt(d)),
                                          const("one", 1.0), const("neg", -10000.0),
                                          numpy_helper.from_array(np.array([h, h, h], np.int64), "split"),
                                          numpy_helper.from_array(np.array([1, 2], np.int64), "ax12")])
    elif op == "GroupQueryAttention":
        # Llama grouped-query attention (rules/onnx/attention.yaml's onnx_gqa_rotary_fused):
        # K and V with heads / 4 heads repeated to the query heads, the causal + padding
        # mask as an additive bias; the rotary embeddings are the same nodes in both forms
        # and left out. The fused form reads seqlens_k and total_sequence_length as inputs
        # (the rewrite computes them with five small nodes shared by every layer).
        kv, d = heads // 4, h // heads
        low = np.finfo(np.float32).min
        feeds["k"] = rng.standard_normal((b, s, kv * d)).astype(np.float32)
        feeds["v"] = rng.standard_normal((b, s, kv * d)).astype(np.float32)
        keep = np.ones((b, s), np.float32)
        keep[-1, s - 3:] = 0
        with np.errstate(over="ignore"):  # lowest + lowest = -inf where both mask, as in the export
            feeds["bias"] = (np.triu(np.full((s, s), low, np.float32), 1)[None, None] +
                             (1 - keep)[:, None, None, :] * low).astype(np.float32)
        feeds["seqlens"] = np.full(b, s - 1, np.int32)
        feeds["total"] = np.array([s], np.int32)
        ins = [x, vi("k", [b, s, kv * d]), vi("v", [b, s, kv * d]), vi("bias", [b, 1, s, s]),
               helper.make_tensor_value_info("seqlens", TensorProto.INT32, [b]),
               helper.make_tensor_value_info("total", TensorProto.INT32, [1])]
        fused = model([helper.make_node("GroupQueryAttention", ["x", "k", "v", "", "", "seqlens", "total", "", "", "",
                                                                "bias"], ["y", "pk", "pv"], domain=MS,
                                        num_heads=heads, kv_num_heads=kv, scale=float(1 / np.sqrt(d)))],
                      ins, [y], [])
        i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
        nodes = [helper.make_node("Reshape", ["x", "qshp"], ["q1"]),
                 helper.make_node("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3])]
        for t in ("k", "v"):
            nodes += [helper.make_node("Reshape", [t, "kvshp"], [t + "1"]),
                      helper.make_node("Transpose", [t + "1"], [t + "2"], perm=[0, 2, 1, 3]),
                      helper.make_node("Unsqueeze", [t + "2", "ax2"], [t + "3"]),
                      helper.make_node("Expand", [t + "3", "rep"], [t + "4"]),
                      helper.make_node("Reshape", [t + "4", "headshp"], [t + "x"])]
        nodes += [helper.make_node("FusedMatMul", ["q", "kx"], ["sc"], domain=MS, transB=1, alpha=float(1 / np.sqrt(d))),
                  helper.make_node("Add", ["sc", "bias"], ["sm"]),
                  helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
                  helper.make_node("MatMul", ["p", "vx"], ["ctx"]),
                  helper.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["ctxt", "oshp"], ["y"])]
        unfused = model(nodes, ins, [y], [i64("qshp", [0, 0, heads, d]), i64("kvshp", [0, 0, kv, d]),
                                          i64("ax2", [2]), i64("rep", [1, 1, heads // kv, 1, 1]),
                                          i64("headshp", [b, heads, s, d]), i64("oshp", [0, 0, h])])
    elif op == "EmbedLayerNormalization":
        # BERT's embeddings: word[ids] + segment[segment_ids] + position[0..S-1], then a layer norm.
        vocab = 30522
        word = const("word", 0.05 * rng.standard_normal((vocab, h)))
        posn = const("posn", 0.05 * rng.standard_normal((512, h)))
        seg = const("seg", 0.05 * rng.standard_normal((2, h)))
        feeds = {"ids": rng.integers(0, vocab, (b, s)).astype(np.int32),
                 "segs": (np.arange(s)[None, :].repeat(b, 0) >= s // 2).astype(np.int32)}
        ins = [helper.make_tensor_value_info("ids", TensorProto.INT32, [b, s]),
               helper.make_tensor_value_info("segs", TensorProto.INT32, [b, s])]
        fused = model([helper.make_node("EmbedLayerNormalization",
                                        ["ids", "segs", "word", "posn", "seg", "gamma", "beta"],
                                        ["y", "mask_index"], domain=MS, epsilon=1e-12)],
                      ins, [y], [word, posn, seg, gamma, beta])
        pos_s = const("pos_s", numpy_helper.to_array(posn)[:s])
        unfused = model([helper.make_node("Gather", ["word", "ids"], ["we"]),
                         helper.make_node("Gather", ["seg", "segs"], ["se"]),
                         helper.make_node("Add", ["we", "se"], ["ws"]),
                         helper.make_node("Add", ["ws", "pos_s"], ["e"]),
                         helper.make_node("LayerNormalization", ["e", "gamma", "beta"], ["y"],
                                          axis=-1, epsilon=1e-12)],
                        ins, [y], [word, seg, pos_s, gamma, beta])
    else:
        sys.exit("op_truth.py: unknown op %s" % op)
    return fused, unfused, feeds


OPS = ["SkipLayerNormalization", "SkipLayerNormalizationDecomposed", "SkipLayerNormalizationDecomposedSum",
       "SkipLayerNormalizationBroadcast", "SkipSimplifiedLayerNormalization",
       "SimplifiedLayerNormalization", "SelfSkipSimplifiedLayerNormalization", "FastGelu", "BiasFastGelu",
       "BiasGelu", "Attention", "EmbedLayerNormalization", "GroupQueryAttention"]
HIDDEN = {"SkipSimplifiedLayerNormalization": 2048, "SimplifiedLayerNormalization": 2048,  # Llama
          "SelfSkipSimplifiedLayerNormalization": 2048, "GroupQueryAttention": 2048}
HEADS = {"GroupQueryAttention": 32}  # Llama at hidden 2048: 32 query heads over 8 key/value heads


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--sizes", default="1x32,4x128,4x512")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--levels", default="disabled,all")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--hidden", type=int, default=0,
                    help="hidden size for every op (0: each op's own, 768 or Llama's 2048)")
    a = ap.parse_args()
    rng = np.random.default_rng(3)
    print("| op | batch x seq x hidden | threads | level | fused ms | unfused ms | fused/unfused | max rel. diff |")
    print("|---|---|---|---|---|---|---|---|")
    for op in a.ops.split(","):
        h = a.hidden or HIDDEN.get(op, 768)
        heads = HEADS.get(op, 12)
        for size in a.sizes.split(","):
            b, s = (int(v) for v in size.split("x"))
            fused, unfused, feeds = pair(op, b, s, h, heads, rng)
            with tempfile.TemporaryDirectory() as work:
                spec_feeds = {}
                for n, arr in feeds.items():
                    f = os.path.join(work, n + ".bin")
                    arr.tofile(f)
                    spec_feeds[n] = {"dtype": {np.float32: "float32", np.int32: "int32"}[arr.dtype.type],
                                     "shape": list(arr.shape), "file": f}
                onnx.save(unfused, os.path.join(work, "unfused.onnx"))
                onnx.save(fused, os.path.join(work, "fused.onnx"))
                for threads in (int(t) for t in a.threads.split(",")):
                    spec = {"feeds": spec_feeds, "levels": a.levels.split(","), "threads": threads,
                            "runs": a.runs, "warmup": 3,
                            "models": [{"key": "unfused", "path": os.path.join(work, "unfused.onnx")},
                                       {"key": "fused", "path": os.path.join(work, "fused.onnx")}]}
                    with open(os.path.join(work, "spec.json"), "w") as f:
                        json.dump(spec, f)
                    r = subprocess.run(["node", os.path.join(HERE, "ort_eval.js"), os.path.join(work, "spec.json")],
                                       capture_output=True, text=True)
                    if r.returncode != 0:
                        print("| %s | %dx%dx%d | %d | - | ort_eval failed: %s |" % (op, b, s, h, threads, r.stderr.strip()[-200:]))
                        continue
                    res = json.loads(r.stdout)
                    for lv in spec["levels"]:
                        fu, un = res["fused"][lv], res["unfused"][lv]
                        if "error" in fu or "error" in un:
                            print("| %s | %dx%dx%d | %d | %s | %s | %s | - | - |" % (
                                op, b, s, h, threads, lv, fu.get("error", "")[:80], un.get("error", "")[:80]))
                            continue
                        print("| %s | %dx%dx%d | %d | %s | %.3f | %.3f | %.2f | %.1e |" % (
                            op, b, s, h, threads, lv, fu["median_ms"], un["median_ms"],
                            fu["median_ms"] / un["median_ms"], fu["rel_err"]), flush=True)


if __name__ == "__main__":
    main()
