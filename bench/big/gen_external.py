#!/usr/bin/python3
"""Writes a transformer-like stack as an ONNX model with external data:
LAYERS x (MatMul [DIM x DIM] + Add [DIM] + Relu), weights in <out>.data, streamed one
tensor at a time (a 20 GB model never sits in memory). Tensors of 1 MiB or more start
on a 64 KiB boundary, as the onnx package lays them out. Usage:
  gen_external.py OUT.onnx --layers 12 --dim 8192 [--seed 1] [--threshold 1024] [--reuse]
--reuse draws one weight matrix and writes it for every layer (a 20 GB model is then
written at disk speed, not at the speed of drawing 5 billion normal numbers).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--dim", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threshold", type=int, default=1024, help="smallest tensor (bytes) written externally")
    ap.add_argument("--reuse", action="store_true", help="one weight matrix for every layer")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    data_name = os.path.basename(a.out) + ".data"
    data_path = os.path.join(os.path.dirname(os.path.abspath(a.out)), data_name)
    inits, nodes = [], []
    with open(data_path, "wb") as f:
        def put(name, arr):
            raw = np.ascontiguousarray(arr, dtype="<f4")
            t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(arr.shape))
            if raw.nbytes < a.threshold:
                t.raw_data = raw.tobytes()
            else:
                off = f.tell()
                if raw.nbytes >= (1 << 20) and off % 65536:
                    f.write(b"\0" * (65536 - off % 65536))
                    off = f.tell()
                raw.tofile(f)
                t.data_location = TensorProto.EXTERNAL
                for k, v in (("location", data_name), ("offset", str(off)), ("length", str(raw.nbytes))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
            inits.append(t)

        x = "x"
        scale = 1.0 / np.sqrt(a.dim)
        shared = None
        for i in range(a.layers):
            if shared is None or not a.reuse:
                shared = (rng.standard_normal((a.dim, a.dim), dtype=np.float32) * scale).astype(np.float32)
            put(f"w{i}", shared)
            put(f"b{i}", (rng.standard_normal((a.dim,), dtype=np.float32) * 0.1).astype(np.float32))
            nodes += [
                helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"], name=f"matmul{i}"),
                helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"add{i}"], name=f"add{i}"),
                helper.make_node("Relu", [f"add{i}"], [f"h{i}"], name=f"relu{i}"),
            ]
            x = f"h{i}"
    graph = helper.make_graph(nodes, "stack", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", a.dim])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["N", a.dim])], inits)
    graph.node[0].input[0] = "input"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="gen_external.py")
    model.ir_version = 8
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())
    print(f"wrote {a.out} and {data_path} ({os.path.getsize(data_path) >> 20} MiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
