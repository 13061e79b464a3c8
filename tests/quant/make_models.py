#!/usr/bin/python3
"""Makes the small quantized models tests/quant commits: two float graphs with seeded weights
(a CNN with Conv -> Relu, Conv -> Clip, a residual Add -> Relu, a depthwise Conv, GlobalAveragePool
and Gemm; an attention block with MatMuls, a scaled score MatMul and a Softmax), each quantized
by bench/quant/quantize.py in the four styles.

usage: /usr/bin/python3 tests/quant/make_models.py [OUTDIR]   (default: tests/quant/models)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def init(rng, name, shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def cnn(rng):
    inits = [init(rng, "w1", [8, 3, 3, 3]), init(rng, "b1", [8], 0.1), init(rng, "w2", [8, 8, 3, 3], 0.2),
             init(rng, "b2", [8], 0.1), init(rng, "w3", [8, 1, 3, 3]), init(rng, "b3", [8], 0.1),
             init(rng, "wf", [10, 8]), init(rng, "bf", [10], 0.1),
             numpy_helper.from_array(np.float32(0.0), "lo"), numpy_helper.from_array(np.float32(6.0), "hi")]
    pad = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], **pad),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **pad),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
        helper.make_node("Add", ["r1", "r2"], ["s"]),
        helper.make_node("Relu", ["s"], ["r3"]),
        helper.make_node("Conv", ["r3", "w3", "b3"], ["c3"], group=8, **pad),
        helper.make_node("Relu", ["c3"], ["r4"]),
        helper.make_node("GlobalAveragePool", ["r4"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    g = helper.make_graph(nodes, "small_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return g


def attention(rng):
    inits = [init(rng, "wq", [16, 16]), init(rng, "wk", [16, 16]), init(rng, "wv", [16, 16]),
             numpy_helper.from_array(np.float32(0.25), "scale"), numpy_helper.from_array(np.array([0, 2, 1], np.int64), "perm_unused")]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["sc"]),
        helper.make_node("Mul", ["sc", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    g = helper.make_graph(nodes, "small_attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16])], inits[:4])
    return g


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "models")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(44)
    quantize = os.path.join(HERE, "..", "..", "bench", "quant", "quantize.py")
    with tempfile.TemporaryDirectory() as tmp:
        for name, graph in (("small_cnn", cnn(rng)), ("small_attention", attention(rng))):
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="graphfuse-tests")
            model.ir_version = 7
            onnx.checker.check_model(model)
            f = os.path.join(tmp, name + ".onnx")
            onnx.save(model, f)
            ranges = os.path.join(tmp, name + ".ranges.json")
            for style in ("ort", "pytorch", "tensorrt", "dynamic"):
                cmd = [sys.executable, quantize, f, os.path.join(out, f"{name}.{style}.onnx"), "--style", style]
                cmd += ["--ranges", ranges] if style != "ort" and style != "dynamic" else []
                cmd += ["--save-ranges", ranges] if style == "ort" else []
                subprocess.run(cmd, check=True)
            onnx.save(model, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
