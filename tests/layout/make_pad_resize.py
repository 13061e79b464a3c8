#!/usr/bin/python3
"""Writes a small NHWC-form ONNX model whose Transposes sit before Pad and Resize (opset 13).

    make_pad_resize.py OUT.onnx INPUT.bin

The reference kernels have no Pad or Resize, so rules/onnx/layout.yaml's onnx_layout_pad and
onnx_layout_resize_* are checked numerically with ONNX Runtime instead (tests/layout/
ort_rules_test.sh): the model, and graphfuse's rewrite of it, run on the same seeded input.
x [1, 3, 5, 6] NCHW -> Transpose to NHWC -> Pad (reflect; constant with a value) ->
Resize (linear by scales; nearest by sizes) -> Transpose back to NCHW -> Conv.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out, input_out = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(0)
    c = lambda name, arr: numpy_helper.from_array(np.asarray(arr), name)
    inits = [
        c("pads_r", np.array([0, 1, 2, 0, 0, 2, 1, 0], np.int64)),
        c("pads_c", np.array([0, 0, 1, 0, 0, 1, 0, 0], np.int64)),
        c("value", np.array(0.5, np.float32)),
        c("scales", np.array([1.0, 2.0, 1.5, 1.0], np.float32)),
        c("sizes", np.array([1, 7, 9, 3], np.int64)),
        c("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)),
    ]
    nodes = [
        helper.make_node("Transpose", ["x"], ["t1"], perm=[0, 2, 3, 1]),
        helper.make_node("Pad", ["t1", "pads_r"], ["p1"], mode="reflect"),
        helper.make_node("Pad", ["p1", "pads_c", "value"], ["p2"], mode="constant"),
        helper.make_node("Resize", ["p2", "", "scales"], ["r1"], mode="linear"),
        helper.make_node("Resize", ["r1", "", "", "sizes"], ["r2"], mode="nearest"),
        helper.make_node("Transpose", ["r2"], ["t2"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["t2", "w"], ["y"], pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(nodes, "pad_resize_nhwc",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 7, 9])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)
    onnx.checker.check_model(model)
    onnx.save(model, out)
    rng.normal(0, 1, (1, 3, 5, 6)).astype("<f4").tofile(input_out)


if __name__ == "__main__":
    main()
