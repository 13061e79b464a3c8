#!/usr/bin/python3
"""Export the model zoo's larger models to ONNX with torch/torchvision (random weights, no downloads).

    /usr/bin/python3 bench/zoo/export_zoo.py OUT_DIR [--models resnet50,densenet121,...]

Models: resnet50, densenet121, efficientnet_b0, vit_b_16 (torchvision, batch 1 x 3 x 224 x 224)
and bert_layer (one BERT-base encoder layer written here: hidden 768, 12 heads, FFN 3072, erf
GELU, post-LayerNorm; inputs hidden states [1, 128, 768] and an additive attention mask
[1, 1, 1, 128]). Weights are seeded random, eval mode, opset 13 (vit_b_16: 14, the first opset
torch 1.13 exports its attention at without a fallback), constant folding on, fixed shapes.
The other zoo models (resnet18, mobilenet_v2, squeezenet1_1, transformer_encoder) live in
../shared/models with the same layout.

Writes OUT_DIR/<model>.onnx, OUT_DIR/io/<model>.input<k>.bin (seeded inputs) and
OUT_DIR/io/<model>.ref<k>.bin (PyTorch's outputs for them), all raw little-endian float32, and
OUT_DIR/manifest.json in the format of ../shared/models/manifest.json (file, op_histogram,
io_inputs, io_outputs, opsets, export), so tests/ort/run_model.js --manifest reads it.
The files are large (resnet50 98 MB, vit_b_16 330 MB): keep OUT_DIR outside the repository.
"""
import argparse
import collections
import json
import math
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

SEED = 20261205


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split(self, x):
        b, s = x.size(0), x.size(1)
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), self.heads * self.head_dim)


class BertLayer(nn.Module):
    """One BERT-base encoder layer as Hugging Face's BertLayer computes it (post-LN, erf GELU)."""

    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.attn = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, mask):
        x = self.ln1(self.attn_out(self.attn(x, mask)) + x)
        return self.ln2(self.out(F.gelu(self.inter(x))) + x)


def image_model(name):
    def make():
        return getattr(torchvision.models, name)(weights=None), [("input", (1, 3, 224, 224))]
    return make


def bert_layer():
    return BertLayer(), [("hidden_states", (1, 128, 768)), ("attention_mask", (1, 1, 1, 128))]


MODELS = {
    "resnet50": (image_model("resnet50"), 13),
    "densenet121": (image_model("densenet121"), 13),
    "efficientnet_b0": (image_model("efficientnet_b0"), 13),
    "vit_b_16": (image_model("vit_b_16"), 14),
    "bert_layer": (bert_layer, 13),
}


def seeded_inputs(name, specs):
    g = torch.Generator().manual_seed(SEED)
    out = []
    for in_name, shape in specs:
        if in_name == "attention_mask":
            # Additive mask: 0 = attend, -10000 = masked (the last 16 positions).
            t = torch.zeros(shape)
            t[..., -16:] = -10000.0
        else:
            t = torch.rand(shape, generator=g) * 2 - 1
        out.append(t)
    return out


def export(name, out_dir):
    make, opset = MODELS[name]
    torch.manual_seed(SEED)
    model, specs = make()
    model.eval()
    inputs = seeded_inputs(name, specs)
    path = os.path.join(out_dir, name + ".onnx")
    t0 = time.time()
    # Exported with gradients on: under no_grad, nn.MultiheadAttention (vit_b_16) takes its
    # fused fast path, an aten op torch 1.13 cannot export.
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, do_constant_folding=True,
                      input_names=[n for n, _ in specs], output_names=["output"],
                      training=torch.onnx.TrainingMode.EVAL)
    with torch.no_grad():
        refs = model(*inputs)
    seconds = time.time() - t0
    refs = refs if isinstance(refs, (tuple, list)) else [refs]
    m = onnx.load(path, load_external_data=False)
    onnx.checker.check_model(path)
    hist = collections.Counter(n.op_type for n in m.graph.node)
    io_dir = os.path.join(out_dir, "io")
    os.makedirs(io_dir, exist_ok=True)
    io_inputs, io_outputs = [], []
    for k, ((in_name, shape), t) in enumerate(zip(specs, inputs)):
        f = f"io/{name}.input{k}.bin"
        t.numpy().astype("<f4").tofile(os.path.join(out_dir, f))
        io_inputs.append({"dtype": "float32", "file": f, "name": in_name, "shape": list(shape)})
    for k, (o, r) in enumerate(zip(m.graph.output, refs)):
        f = f"io/{name}.ref{k}.bin"
        r.numpy().astype("<f4").tofile(os.path.join(out_dir, f))
        io_outputs.append({"dtype": "float32", "name": o.name, "ref_file": f, "shape": list(r.shape)})
    entry = {
        "file": name + ".onnx",
        "node_count": len(m.graph.node),
        "op_histogram": dict(sorted(hist.items())),
        "inputs": [n for n, _ in specs],
        "outputs": [o.name for o in m.graph.output],
        "io_inputs": io_inputs,
        "io_outputs": io_outputs,
        "opsets": {(o.domain or "ai.onnx"): o.version for o in m.opset_import},
        "export": {"do_constant_folding": True, "export_seconds": round(seconds, 2), "opset_version": opset,
                   "seed": SEED, "torch": torch.__version__, "torchvision": torchvision.__version__,
                   "training": "TrainingMode.EVAL"},
    }
    print(f"{name}: {len(m.graph.node)} nodes, {os.path.getsize(path) / 1e6:.1f} MB, "
          f"{', '.join(f'{k} {v}' for k, v in hist.most_common(8))}", flush=True)
    return entry


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    a = ap.parse_args()
    names = [n for n in a.models.split(",") if n]
    bad = [n for n in names if n not in MODELS]
    if bad:
        sys.exit(f"export_zoo: unknown model(s) {', '.join(bad)} (known: {', '.join(MODELS)})")
    os.makedirs(a.out_dir, exist_ok=True)
    manifest_path = os.path.join(a.out_dir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    torch.set_num_threads(1)
    for n in names:
        manifest[n] = export(n, a.out_dir)
        with open(manifest_path, "w") as f:  # after each model: an interrupted run keeps the rest
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
