#!/usr/bin/python3
"""graphfuse's own quantizer for tests and benchmarks: float ONNX model -> QDQ model.

Static MinMax calibration on seeded random inputs (ranges measured by running the float model
with ONNX Runtime through bench/quant/calibrate.js, or read from --ranges), then one of four
styles (docs/quantization.md describes each):

  ort       ONNX Runtime's QDQ format: Q -> DQ on every input and output of a quantized op;
            uint8 asymmetric activations, int8 symmetric weights (per channel, axis 0, for
            Conv), int32 bias with scale input_scale * weight_scale; a Relu/Clip right after a
            quantized op is removed and its range given to the op's output (the Q saturates).
            Shape ops (MaxPool, Reshape, Transpose, Flatten, Squeeze, Unsqueeze, Slice) whose
            input is quantized get Q/DQ with their input's parameters.
  pytorch   as exported by PyTorch's quantization flow: the activation stays inside the unit,
            DQ -> Conv -> Relu/Clip -> Q (no Q/DQ between the op and its activation).
  tensorrt  TensorRT's explicit quantization: Q -> DQ on the activation inputs of quantized ops
            only (outputs stay float), DQ on weights, float bias.
  dynamic   ONNX Runtime's dynamic quantization: DynamicQuantizeLinear -> MatMulInteger ->
            Cast -> Mul (scale product) for MatMul and Gemm with constant weights, and
            ConvInteger (uint8 weights) for Conv; no calibration.

usage: /usr/bin/python3 bench/quant/quantize.py MODEL.onnx OUT.onnx --style ort|pytorch|tensorrt|dynamic
           [--seed N] [--runs N] [--ranges RANGES.json] [--save-ranges RANGES.json]
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

# Ops whose float computation the styles put inside a quantized unit.
COMPUTE = {"Conv", "MatMul", "Gemm", "Add", "Mul", "Sigmoid", "LeakyRelu", "GlobalAveragePool",
           "AveragePool", "Concat", "Softmax"}
# Ops that move values without computing on them: their output keeps the input's parameters.
DIRECT = {"MaxPool", "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Slice"}
ACTIVATIONS = {"Relu", "Clip"}
# Ops whose activation (Relu/Clip) the styles fold into the unit.
FUSES_ACTIVATION = {"Conv", "MatMul", "Gemm", "Add"}


def fail(msg):
    sys.stderr.write(f"quantize: {msg}\n")
    sys.exit(2)


class Model:
    """The float graph with constants as initializers and producer/consumer maps."""

    def __init__(self, model):
        self.model = model
        g = model.graph
        # Constant nodes become initializers so that every constant is looked up one way.
        # So do Identity nodes on constants (the exporter's shared weights).
        keep = []
        inits = {t.name: t for t in g.initializer}
        for n in g.node:
            src = None
            if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
                src = n.attribute[0].t
            elif n.op_type == "Identity" and n.input[0] in inits:
                src = inits[n.input[0]]
            if src is None:
                keep.append(n)
                continue
            t = onnx.TensorProto()
            t.CopyFrom(src)
            t.name = n.output[0]
            g.initializer.append(t)
            inits[t.name] = t
        del g.node[:]
        g.node.extend(keep)
        self.inits = {t.name: t for t in g.initializer}
        self.graph_inputs = {i.name for i in g.input if i.name not in self.inits}
        self.graph_outputs = {o.name for o in g.output}
        self.reindex()

    def reindex(self):
        self.producer = {}
        self.consumers = {}
        for n in self.model.graph.node:
            for o in n.output:
                self.producer[o] = n
            for i in n.input:
                if i:
                    self.consumers.setdefault(i, []).append(n)

    def const(self, name):
        return name in self.inits

    def array(self, name):
        return numpy_helper.to_array(self.inits[name])

    def is_activation(self, name):
        return bool(name) and not self.const(name)


def seeded_inputs(model, seed, runs, tmp):
    """Seeded standard-normal float32 inputs for every graph input (symbolic dims = 1)."""
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    spec = []
    for r in range(runs):
        run = {}
        for i in model.graph.input:
            if i.name in inits:
                continue
            if i.type.tensor_type.elem_type != TensorProto.FLOAT:
                fail(f"input {i.name} is not float32; only float inputs are calibrated")
            shape = [d.dim_value if d.HasField("dim_value") else 1 for d in i.type.tensor_type.shape.dim]
            f = os.path.join(tmp, f"in{r}_{len(run)}.bin")
            rng.standard_normal(shape).astype(np.float32).tofile(f)
            run[i.name] = {"file": f, "shape": shape}
        spec.append(run)
    return spec


def calibrate(m, seed, runs):
    """Min and max of every float tensor over `runs` seeded inputs, measured by ORT."""
    aug = onnx.ModelProto()
    aug.CopyFrom(m.model)
    inferred = onnx.shape_inference.infer_shapes(aug)
    floats = {v.name for v in list(inferred.graph.value_info) + list(inferred.graph.output)
              if v.type.tensor_type.elem_type == TensorProto.FLOAT}
    have = {o.name for o in aug.graph.output}
    for n in aug.graph.node:
        for o in n.output:
            if o in floats and o not in have:
                aug.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
                have.add(o)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "aug.onnx")
        onnx.save(aug, path)
        spec = os.path.join(tmp, "spec.json")
        with open(spec, "w") as f:
            json.dump({"runs": seeded_inputs(aug, seed, runs, tmp)}, f)
        out = os.path.join(tmp, "ranges.json")
        r = subprocess.run(["node", os.path.join(HERE, "calibrate.js"), path, spec, out])
        if r.returncode != 0:
            fail("calibration failed (is tests/ort/install.sh done?)")
        with open(out) as f:
            ranges = json.load(f)
    # Graph inputs are ranges too: a standard normal's, as measured on the same inputs.
    for i in m.graph_inputs:
        ranges.setdefault(i, [-4.0, 4.0])
    return ranges


def uint8_params(lo, hi):
    lo, hi = min(0.0, float(lo)), max(0.0, float(hi))
    scale = (hi - lo) / 255.0
    if scale == 0.0:
        return np.float32(1.0), np.uint8(0)
    zp = np.clip(np.round(-lo / scale), 0, 255)
    return np.float32(scale), np.uint8(zp)


def int8_symmetric(w, axis):
    """Symmetric int8 in [-127, 127]: per channel along `axis`, or per tensor when None."""
    if axis is None:
        amax = np.max(np.abs(w))
        scale = np.float32(amax / 127.0 if amax > 0 else 1.0)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        return q, scale, np.int8(0)
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.max(np.abs(w), axis=red)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale, np.zeros(scale.shape, np.int8)


class Builder:
    """New nodes and initializers with unique names."""

    def __init__(self, m):
        self.m = m
        self.nodes = []
        self.inits = []
        self.used = set(m.producer) | set(m.inits) | m.graph_inputs
        self.count = 0

    def name(self, base):
        while True:
            self.count += 1
            n = f"{base}_{self.count}"
            if n not in self.used:
                self.used.add(n)
                return n

    def init(self, base, arr):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def node(self, op, inputs, outputs, domain="", **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=self.name(op), domain=domain, **attrs))


def remove_activations(m, ranges):
    """ORT's QDQ format: a Relu/Clip right after a quantized op (its sole reader) disappears and
    the op writes the activation's output, whose range makes the Q saturate as the activation
    would (uint8 with zero point 0 at the range's low end)."""
    g = m.model.graph
    drop = []
    for n in g.node:
        if n.op_type not in ACTIVATIONS:
            continue
        p = m.producer.get(n.input[0])
        if p is None or p.op_type not in FUSES_ACTIVATION or not quantized_node(m, p):
            continue
        if len(m.consumers.get(n.input[0], [])) != 1 or n.input[0] in m.graph_outputs:
            continue
        lo = ranges.get(n.output[0], [0, 0])[0]
        if lo < 0:  # a Clip below zero is not a uint8 saturation
            continue
        idx = list(p.output).index(n.input[0])
        p.output[idx] = n.output[0]
        drop.append(n)
    for n in drop:
        g.node.remove(n)
    m.reindex()


def quantized_node(m, n):
    if n.op_type not in COMPUTE:
        return False
    if n.op_type in ("Add", "Mul"):  # elementwise with a constant stays float
        return all(m.is_activation(i) for i in n.input)
    if n.op_type in ("Conv", "Gemm"):
        return m.is_activation(n.input[0]) and m.const(n.input[1])
    return any(m.is_activation(i) for i in n.input)


def quantize_static(m, style, ranges):
    if style == "ort":
        remove_activations(m, ranges)
    g = m.model.graph
    qnodes = [n for n in g.node if quantized_node(m, n)]
    tensors = []  # activation tensors that get Q -> DQ, in graph order
    tied = {}     # tensor -> tensor whose parameters it shares (direct ops)

    def add(t):
        if t and t not in tensors and m.is_activation(t):
            tensors.append(t)

    for n in g.node:
        if n in qnodes:
            for i in n.input:
                if n.op_type in ("Conv", "Gemm") and i != n.input[0]:
                    continue  # weight and bias are quantized as constants
                add(i)
            if style == "tensorrt":
                continue
            for o in n.output:
                readers = m.consumers.get(o, [])
                act = readers[0] if len(readers) == 1 and readers[0].op_type in ACTIVATIONS else None
                if style == "pytorch" and n.op_type in FUSES_ACTIVATION and act is not None \
                        and o not in m.graph_outputs:
                    add(act.output[0])  # the activation is inside the unit
                else:
                    add(o)
        elif n.op_type in DIRECT and style != "tensorrt" and n.input[0] in tensors:
            add(n.output[0])
            tied[n.output[0]] = n.input[0]

    def root(t):
        while t in tied:
            t = tied[t]
        return t

    params = {}
    for t in tensors:
        if t not in ranges:
            fail(f"no calibration range for tensor {t}")
        params[t] = uint8_params(*ranges[root(t)])
    for t in tensors:
        params[t] = params[root(t)]

    b = Builder(m)
    renamed = {}
    for t in tensors:
        s, zp = params[t]
        sn, zn = b.init(t + "_scale", s), b.init(t + "_zero_point", zp)
        q, f = b.name(t + "_quantized"), t
        if t in m.graph_inputs:
            dq = b.name(t + "_dequantized")
            renamed[t] = dq
            b.node("QuantizeLinear", [t, sn, zn], [q])
            b.node("DequantizeLinear", [q, sn, zn], [dq])
        else:
            f = b.name(t + "_float")
            p = m.producer[t]
            p.output[list(p.output).index(t)] = f
            b.node("QuantizeLinear", [f, sn, zn], [q])
            b.node("DequantizeLinear", [q, sn, zn], [t])
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in renamed:
                n.input[k] = renamed[i]

    original = {v: k for k, v in renamed.items()}
    # Weights and biases: quantized initializers read through DequantizeLinear, which writes the
    # float initializer's name, so the ops keep their inputs.
    done = set()
    for n in qnodes:
        if n.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        wi = 1
        if n.op_type == "MatMul":
            if not m.const(n.input[1]):
                continue
        w = n.input[wi]
        if w in done:
            continue
        done.add(w)
        arr = m.array(w).astype(np.float32)
        axis = 0 if n.op_type == "Conv" else None
        wq, ws, wz = int8_symmetric(arr, axis)
        names = [b.init(w + "_quantized", wq), b.init(w + "_scale", ws), b.init(w + "_zero_point", wz)]
        b.node("DequantizeLinear", names, [w], **({"axis": 0} if axis is not None else {}))
        if len(n.input) > 2 and n.input[2] and m.const(n.input[2]) and style != "tensorrt":
            bias = n.input[2]
            x = original.get(n.input[0], n.input[0])
            if x not in params:
                fail(f"input {x} of {n.name} has no quantization parameters")
            xs = params[x][0]
            bs = (np.float32(xs) * ws).astype(np.float32)
            barr = m.array(bias).astype(np.float32)
            bq = np.clip(np.round(barr / bs), -2**31, 2**31 - 1).astype(np.int32)
            bnames = [b.init(bias + "_quantized", bq), b.init(bias + "_scale", bs),
                      b.init(bias + "_zero_point", np.zeros(np.shape(bs), np.int32))]
            b.node("DequantizeLinear", bnames, [bias], **({"axis": 0} if np.ndim(bs) else {}))
            done.add(bias)
    finish(m, b, drop_inits=done)


def quantize_dynamic(m):
    g = m.model.graph
    b = Builder(m)
    drop_nodes, done = [], set()
    for n in g.node:
        if n.op_type == "MatMul" and m.is_activation(n.input[0]) and m.const(n.input[1]) \
                and m.array(n.input[1]).ndim == 2:
            w, bias, out = m.array(n.input[1]).astype(np.float32), None, n.output[0]
        elif n.op_type == "Gemm" and m.is_activation(n.input[0]) and m.const(n.input[1]):
            at = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if at.get("transA", 0) or at.get("alpha", 1.0) != 1.0 or at.get("beta", 1.0) != 1.0:
                continue
            w = m.array(n.input[1]).astype(np.float32)
            w = w.T if at.get("transB", 0) else w
            bias = n.input[2] if len(n.input) > 2 and n.input[2] else None
            out = n.output[0]
        elif n.op_type == "Conv" and m.is_activation(n.input[0]) and m.const(n.input[1]):
            dynamic_conv(m, b, n)
            drop_nodes.append(n)
            continue
        else:
            continue
        wq, ws, wz = int8_symmetric(w, None)
        xq, xs, xz = b.name("x_quantized"), b.name("x_scale"), b.name("x_zero_point")
        b.node("DynamicQuantizeLinear", [n.input[0]], [xq, xs, xz])
        mi, fl, sc = b.name("matmul_int"), b.name("matmul_float"), b.name("scale")
        b.node("MatMulInteger", [xq, b.init("w_quantized", wq), xz, b.init("w_zero_point", wz)], [mi])
        b.node("Cast", [mi], [fl], to=TensorProto.FLOAT)
        b.node("Mul", [xs, b.init("w_scale", ws)], [sc])
        if bias is None:
            b.node("Mul", [fl, sc], [out])
        else:
            y = b.name("matmul_scaled")
            b.node("Mul", [fl, sc], [y])
            b.node("Add", [y, bias], [out])
        done.add(n.input[1])
        drop_nodes.append(n)
    for n in drop_nodes:
        g.node.remove(n)
    finish(m, b, drop_inits=done)


def dynamic_conv(m, b, n):
    """ConvInteger with uint8 per-tensor weights (ORT's CPU ConvInteger takes uint8 x uint8)."""
    w = m.array(n.input[1]).astype(np.float32)
    lo, hi = min(0.0, float(w.min())), max(0.0, float(w.max()))
    ws = np.float32((hi - lo) / 255.0 if hi > lo else 1.0)
    wz = np.uint8(np.clip(np.round(-lo / ws), 0, 255))
    wq = np.clip(np.round(w / ws) + wz, 0, 255).astype(np.uint8)
    xq, xs, xz = b.name("x_quantized"), b.name("x_scale"), b.name("x_zero_point")
    b.node("DynamicQuantizeLinear", [n.input[0]], [xq, xs, xz])
    ci, fl, sc = b.name("conv_int"), b.name("conv_float"), b.name("scale")
    attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
    b.node("ConvInteger", [xq, b.init("w_quantized", wq), xz, b.init("w_zero_point", wz)], [ci], **attrs)
    b.node("Cast", [ci], [fl], to=TensorProto.FLOAT)
    b.node("Mul", [xs, b.init("w_scale", ws)], [sc])
    if len(n.input) > 2 and n.input[2]:
        y = b.name("conv_scaled")
        b.node("Mul", [fl, sc], [y])
        bias = m.array(n.input[2]).astype(np.float32).reshape(1, -1, 1, 1)
        b.node("Add", [y, b.init("bias", bias)], [n.output[0]])
    else:
        b.node("Mul", [fl, sc], [n.output[0]])


def finish(m, b, drop_inits):
    """Adds the new nodes and initializers, drops replaced constants, sorts the graph."""
    g = m.model.graph
    keep = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(keep + b.inits)
    for i in list(g.input):
        if i.name in drop_inits:
            g.input.remove(i)
    nodes = list(g.node) + b.nodes
    # Topological order (Kahn, stable in the original order).
    ready = {i.name for i in g.input} | {t.name for t in g.initializer} | {""}
    out, pending = [], nodes
    while pending:
        rest = []
        for n in pending:
            if all(i in ready for i in n.input):
                out.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            fail(f"graph has a cycle or an unknown input at {rest[0].name} ({list(rest[0].input)})")
        pending = rest
    del g.node[:]
    g.node.extend(out)
    del g.value_info[:]  # stale after the renaming; readers infer again


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--style", required=True, choices=["ort", "pytorch", "tensorrt", "dynamic"])
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--ranges", help="calibration ranges JSON (skips running the model)")
    ap.add_argument("--save-ranges", help="write the measured ranges here")
    a = ap.parse_args()
    try:
        model = onnx.load(a.model)
    except Exception as e:  # noqa: BLE001 - any load failure is the user's file
        fail(f"{a.model}: cannot load: {e}")
    m = Model(model)
    if a.style == "dynamic":
        quantize_dynamic(m)
    else:
        if a.ranges:
            with open(a.ranges) as f:
                ranges = json.load(f)
        else:
            ranges = calibrate(m, a.seed, a.runs)
        if a.save_ranges:
            with open(a.save_ranges, "w") as f:
                json.dump(ranges, f)
        quantize_static(m, a.style, ranges)
    onnx.checker.check_model(m.model)
    onnx.save(m.model, a.out)
    ops = {}
    for n in m.model.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    print(f"{a.out}: {a.style}: " + ", ".join(f"{k} {v}" for k, v in sorted(ops.items())))


if __name__ == "__main__":
    main()
