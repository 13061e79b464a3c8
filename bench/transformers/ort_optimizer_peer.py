#!/usr/bin/python3
"""Run ONNX Runtime's transformers optimizer (optimize_model) on models, as a peer for graphfuse.

    /usr/bin/python3 bench/transformers/ort_optimizer_peer.py --ort-src /work/gen/ort-src \\
        --out OUT_DIR MODEL.onnx...

--ort-src is a checkout holding onnxruntime/python/tools/transformers (and
onnxruntime/python/tools/symbolic_shape_infer.py), e.g. `git archive` of a public ONNX Runtime
mirror; it is never part of graphfuse. `import onnxruntime` is satisfied by
bench/transformers/ort_stub (graphfuse's own stand-in: ORT's graph levels run through
onnxruntime-node). model_type: bert for BERT and ViT, gpt2 for GPT-2 and Llama (from the file
name; --model-type overrides). Every opt_level in --opt-levels is tried (0 = its Python fusions
only; 1/2/99 = ORT's basic/extended/all first); the one with the fewest nodes (all but Constant)
is its best and is written as OUT/<name>.ort.onnx. Prints one line per model and writes
OUT/ort_optimizer.json: {file: {best_opt_level, nodes, per_level: {level: nodes}, ops: {...}}}.
"""
import argparse
import collections
import contextlib
import io
import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def model_type_for(path):
    base = os.path.basename(path)
    if base.startswith(("gpt2", "llama")):
        return "gpt2"
    return "bert"


def heads_hidden(path):
    """num_heads/hidden_size for optimize_model: the exported blocks' dims; 0 = let it detect."""
    base = os.path.basename(path)
    if base.startswith(("bert", "gpt2", "llama", "vit")):
        return 4, 32
    return 0, 0


def count(model):
    ops = collections.Counter(n.op_type for n in model.graph.node if n.op_type != "Constant")
    return sum(ops.values()), dict(sorted(ops.items()))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ort-src", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--model-type")
    ap.add_argument("--opt-levels", default="0,1,2,99")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    tools = os.path.join(a.ort_src, "onnxruntime", "python", "tools", "transformers")
    if not os.path.isfile(os.path.join(tools, "optimizer.py")):
        sys.exit("ort_optimizer_peer.py: %s has no optimizer.py (want an ONNX Runtime checkout)" % tools)
    sys.path[:0] = [os.path.join(HERE, "ort_stub"), tools]
    logging.disable(logging.WARNING)
    import onnx
    from optimizer import optimize_model  # noqa: E402 (ORT's, from --ort-src)

    os.makedirs(a.out, exist_ok=True)
    results = {}
    for path in a.models:
        name = os.path.basename(path)
        mtype = a.model_type or model_type_for(path)
        heads, hidden = heads_hidden(path)
        per_level, best = {}, None
        for level in [int(x) for x in a.opt_levels.split(",")]:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    opt = optimize_model(path, model_type=mtype, num_heads=heads, hidden_size=hidden,
                                         opt_level=level, use_gpu=False)
            except Exception as e:  # its failure is a result to report, not ours to hide
                per_level[str(level)] = "error: %s" % str(e).splitlines()[0][:120]
                continue
            n, ops = count(opt.model)
            per_level[str(level)] = n
            if best is None or n < best[1]:
                best = (level, n, ops, opt.model)
        orig_n, _ = count(onnx.load(path))
        entry = {"model_type": mtype, "original_nodes": orig_n, "per_level": per_level}
        if best:
            out = os.path.join(a.out, name.replace(".onnx", ".ort.onnx"))
            onnx.save(best[3], out)
            entry.update(best_opt_level=best[0], nodes=best[1], ops=best[2])
            fused = {k: v for k, v in best[2].items() if k in FUSED}
            print("%-32s %4d -> %4d (opt_level %d) %s  levels %s" % (
                name, orig_n, best[1], best[0], fused, per_level), flush=True)
        else:
            print("%-32s failed at every level: %s" % (name, per_level), flush=True)
        results[name] = entry
    with open(os.path.join(a.out, "ort_optimizer.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)


FUSED = {"Attention", "MultiHeadAttention", "GroupQueryAttention", "RotaryEmbedding",
         "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization",
         "EmbedLayerNormalization", "FastGelu", "BiasGelu", "Gelu", "LayerNormalization",
         "BiasFastGelu", "FusedMatMul"}

if __name__ == "__main__":
    main()
