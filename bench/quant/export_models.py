#!/usr/bin/python3
"""Exports the two float models the quantization benchmarks add to ../shared/models:
efficientnet_b0 (torchvision, Sigmoid*Mul SiLU and squeeze-excite blocks) and bert_layer (one
BERT-base encoder layer: 768 hidden, 12 heads, 3072 FFN with erf GELU, post-LayerNorm, sequence
128). Seeded random weights, batch 1, eval mode, opset 13, like the shared models.

usage: /usr/bin/python3 bench/quant/export_models.py OUTDIR
"""
import math
import sys

import torch
import torchvision


class BertLayer(torch.nn.Module):
    def __init__(self, hidden=768, heads=12, ffn=3072):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.q = torch.nn.Linear(hidden, hidden)
        self.k = torch.nn.Linear(hidden, hidden)
        self.v = torch.nn.Linear(hidden, hidden)
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.ff1 = torch.nn.Linear(hidden, ffn)
        self.ff2 = torch.nn.Linear(ffn, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)

    def split(self, t):
        b, s, _ = t.shape
        return t.reshape(b, s, self.heads, self.dh).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        att = torch.softmax(torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.dh), dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(b, s, h)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


def export(model, example, path):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, example, path, opset_version=13, do_constant_folding=True,
                          input_names=["input"], output_names=["output"])
    print("wrote", path)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    torch.manual_seed(20240601)
    export(torchvision.models.efficientnet_b0(), torch.randn(1, 3, 224, 224), f"{out}/efficientnet_b0.onnx")
    torch.manual_seed(20240601)
    export(BertLayer(), torch.randn(1, 128, 768), f"{out}/bert_layer.onnx")


if __name__ == "__main__":
    main()
