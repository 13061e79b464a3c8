#!/usr/bin/python3
"""Writes an ONNX model with efficientnet_b0's structure and seeded random weights.

    make_efficientnet.py OUT.onnx [--input-out INPUT.bin] [--seed N]

The layout tests need a CNN with SiLU and squeeze-excite blocks; ../shared/models has none
and building one needs no trained weights: the graph is what a PyTorch exporter writes for
torchvision's efficientnet_b0 in eval mode (opset 13), with random weights:

  stem     Conv 3x3/2 (3 -> 32) + SiLU
  16 MBConv blocks in 7 stages (expand ratio, kernel, stride, channels, repeats below):
           expand Conv 1x1 + SiLU (not when the ratio is 1), depthwise Conv kxk + SiLU,
           squeeze-excite GlobalAveragePool -> Conv 1x1 -> SiLU -> Conv 1x1 -> Sigmoid -> Mul,
           project Conv 1x1 (no activation), residual Add when stride 1 and in == out
  head     Conv 1x1 (320 -> 1280) + SiLU, GlobalAveragePool, Flatten, Gemm (1280 -> 1000)

SiLU is written as x * Sigmoid(x) (Sigmoid then Mul), as the exporter does. Every Conv but
the squeeze-excite ones is followed by a BatchNormalization in the network; as an exporter
does in eval mode, each is folded into the Conv's weight and bias (the BatchNorm parameters
are random too, so the folded weights look like an exported model's). With He-scaled
weights the activations keep their magnitude through the 16 blocks, so relative
comparisons of the output are meaningful. 49 SiLUs, 16 squeeze-excite Sigmoids.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# (expand ratio, kernel, stride, input channels, output channels, repeats): torchvision's b0.
STAGES = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
]


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def init(self, base, arr):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(arr.astype(np.float32), n))
        return n

    def node(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, group=1, bn=True):
        """Conv (BatchNorm folded into weight and bias when bn)."""
        fan_in = (cin // group) * k * k
        w = self.rng.normal(0.0, np.sqrt(2.0 / fan_in), (cout, cin // group, k, k))
        if bn:
            gamma = self.rng.uniform(0.5, 1.5, cout)
            beta = self.rng.normal(0.0, 0.1, cout)
            mean = self.rng.normal(0.0, 0.1, cout)
            var = self.rng.uniform(0.5, 1.5, cout)
            scale = gamma / np.sqrt(var + 1e-5)
            w = w * scale[:, None, None, None]
            b = beta - mean * scale
        else:
            b = self.rng.normal(0.0, 0.1, cout)
        pad = (k - 1) // 2
        return self.node("Conv", [x, self.init("w", w), self.init("b", b)], dilations=[1, 1], group=group,
                         kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])

    def silu(self, x):
        return self.node("Mul", [x, self.node("Sigmoid", [x])])


def mbconv(b, x, expand, k, stride, cin, cout):
    mid = cin * expand
    h = x
    if expand != 1:
        h = b.silu(b.conv(h, cin, mid, 1))
    h = b.silu(b.conv(h, mid, mid, k, stride=stride, group=mid))
    squeeze = max(1, cin // 4)
    s = b.node("GlobalAveragePool", [h])
    s = b.silu(b.conv(s, mid, squeeze, 1, bn=False))
    s = b.node("Sigmoid", [b.conv(s, squeeze, mid, 1, bn=False)])
    h = b.node("Mul", [s, h])
    h = b.conv(h, mid, cout, 1)
    if stride == 1 and cin == cout:
        h = b.node("Add", [h, x])
    return h


def build(seed):
    b = Builder(seed)
    x = b.silu(b.conv("input", 3, 32, 3, stride=2))
    for expand, k, stride, cin, cout, repeats in STAGES:
        for i in range(repeats):
            x = mbconv(b, x, expand, k, stride if i == 0 else 1, cin if i == 0 else cout, cout)
    x = b.silu(b.conv(x, 320, 1280, 1))
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    w = b.rng.normal(0.0, np.sqrt(1.0 / 1280), (1000, 1280))
    bias = b.rng.normal(0.0, 0.01, 1000)
    b.nodes.append(helper.make_node("Gemm", [x, b.init("fc_w", w), b.init("fc_b", bias)], ["output"],
                                    name="gemm", alpha=1.0, beta=1.0, transB=1))
    graph = helper.make_graph(
        b.nodes, "efficientnet_b0",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])],
        initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="graphfuse make_efficientnet.py", ir_version=7)
    onnx.checker.check_model(model)
    return model, b.rng


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--input-out", help="also write a seeded random [1,3,224,224] float32 input here")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    model, rng = build(a.seed)
    onnx.save(model, a.out)
    if a.input_out:
        rng.normal(0.0, 1.0, (1, 3, 224, 224)).astype("<f4").tofile(a.input_out)
    hist = {}
    for n in model.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    print(a.out, " ".join(f"{k}:{v}" for k, v in sorted(hist.items())))


if __name__ == "__main__":
    main()
