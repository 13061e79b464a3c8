#!/usr/bin/python3
"""Builds the NHWC form of an NCHW ONNX CNN, as a TensorFlow/Keras converter writes it.

    make_nhwc.py IN.onnx OUT.onnx
    make_nhwc.py --transpose-input NCHW.bin NHWC.bin N C H W   (raw float32)

The spec (issue 10): activations are NHWC; every Conv and every pooling op is wrapped as
Transpose(perm=[0,3,1,2]) -> op -> Transpose(perm=[0,2,3,1]); a Conv's bias becomes a
separate Add of its [C] constant on the NHWC value; Relu / Clip / Add / Mul / Sigmoid and
other elementwise ops run on NHWC values; Concat on the channel axis uses axis 3; the graph
input is NHWC. Flatten of a [N,1,1,C] value (after a global pool) reads the NHWC value, as a
Keras Flatten/Reshape does; any other 4-D value an op needs in NCHW gets a Transpose back.
2-D values (Gemm, the classifier) are unchanged. Weights are shared with the input model.
"""
import sys

import onnx
from onnx import helper, numpy_helper, shape_inference

TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]
WRAPPED = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "LpPool"}
ELEMENTWISE = {"Relu", "Clip", "Add", "Sub", "Mul", "Div", "Sigmoid", "Tanh", "LeakyRelu",
               "HardSigmoid", "HardSwish", "Identity", "Dropout"}


def convert(model):
    model = shape_inference.infer_shapes(model)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    ranks = {}
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in vi.type.tensor_type.shape.dim]
        ranks[vi.name] = len(dims)
        shapes[vi.name] = dims
    for t in g.initializer:
        ranks[t.name] = len(t.dims)
        shapes[t.name] = list(t.dims)

    nodes = []
    new_inits = []
    nhwc = set()  # value names (original) whose NHWC form stands in for the NCHW value
    counter = [0]

    def fresh(base):
        counter[0] += 1
        return f"{base}__nhwc{counter[0]}"

    def transpose(src, perm, name_hint):
        out = fresh(name_hint)
        nodes.append(helper.make_node("Transpose", [src], [out], name=out, perm=perm))
        return out

    def as_nchw(v):
        return transpose(v, TO_NCHW, v + "_nchw") if v in nhwc else v

    new_inputs = []
    for inp in g.input:
        if inp.name in inits:
            continue
        if ranks.get(inp.name) == 4:
            d = shapes[inp.name]
            new_inputs.append(helper.make_tensor_value_info(
                inp.name, inp.type.tensor_type.elem_type, [d[0], d[2], d[3], d[1]]))
            nhwc.add(inp.name)
        else:
            new_inputs.append(inp)

    for n in g.node:
        op = n.op_type
        if op in WRAPPED and n.input[0] in nhwc:
            x = transpose(n.input[0], TO_NCHW, n.output[0] + "_in")
            ins = [x] + list(n.input[1:])
            bias = None
            if op == "Conv" and len(ins) == 3 and ins[2]:
                bias = ins[2]
                ins = ins[:2]
            mid = fresh(n.output[0] + "_nchw")
            node = helper.make_node(op, ins, [mid], name=n.name or mid)
            node.attribute.extend(n.attribute)
            nodes.append(node)
            if bias is None:
                nodes.append(helper.make_node("Transpose", [mid], [n.output[0]], name=fresh("t"), perm=TO_NHWC))
            else:
                y = transpose(mid, TO_NHWC, n.output[0] + "_nobias")
                nodes.append(helper.make_node("Add", [y, bias], [n.output[0]], name=fresh("bias_add")))
            nhwc.add(n.output[0])
        elif op in ELEMENTWISE and any(i in nhwc for i in n.input):
            ins = list(n.input)
            for k, i in enumerate(ins):
                if i in nhwc or not i:
                    continue
                # A constant operand of an NHWC op: a [C,1,1] / [1,C,1,1] channel vector
                # becomes the [C] vector a TF graph carries; scalars stay.
                if i in inits and len(inits[i].dims) >= 3 and op != "Clip":
                    arr = numpy_helper.to_array(inits[i])
                    arr = arr.reshape(arr.shape[-3:]).transpose(1, 2, 0)
                    if arr.shape[0] == 1 and arr.shape[1] == 1:
                        arr = arr.reshape(arr.shape[-1])
                    name = fresh(i)
                    new_inits.append(numpy_helper.from_array(arr, name))
                    ins[k] = name
                elif ranks.get(i, 0) == 4:
                    ins[k] = transpose(i, TO_NHWC, i + "_nhwc")
            node = helper.make_node(op, ins, list(n.output), name=n.name)
            node.attribute.extend(n.attribute)
            nodes.append(node)
            nhwc.update(o for o in n.output if ranks.get(o, 4) == 4)
        elif op == "Concat" and any(i in nhwc for i in n.input):
            ins = [i if i in nhwc else transpose(i, TO_NHWC, i + "_nhwc") for i in n.input]
            axis = next(a.i for a in n.attribute if a.name == "axis")
            axis = axis + 4 if axis < 0 else axis
            node = helper.make_node(op, ins, list(n.output), name=n.name, axis=[0, 3, 1, 2][axis])
            nodes.append(node)
            nhwc.add(n.output[0])
        elif op == "Flatten" and n.input[0] in nhwc and shapes.get(n.input[0], [0, 0, 0, 0])[2:] == [1, 1]:
            nodes.append(n)  # [N,1,1,C] and [N,C,1,1] flatten alike
        else:
            ins = [as_nchw(i) for i in n.input]
            node = helper.make_node(op, ins, list(n.output), name=n.name, domain=n.domain)
            node.attribute.extend(n.attribute)
            nodes.append(node)

    outputs = []
    for o in g.output:
        if o.name in nhwc:
            d = shapes[o.name]
            out = o.name + "_nhwc"
            # Graph outputs keep their names; an NHWC 4-D output is declared NHWC.
            outputs.append(helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type,
                                                         [d[0], d[2], d[3], d[1]]))
        else:
            outputs.append(helper.make_tensor_value_info(o.name, o.type.tensor_type.elem_type, shapes.get(o.name)))

    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used] + new_inits
    graph = helper.make_graph(nodes, (g.name or "model") + "_nhwc", new_inputs, outputs, initializer=keep)
    out = helper.make_model(graph, opset_imports=model.opset_import, producer_name="graphfuse make_nhwc.py",
                            ir_version=model.ir_version)
    return out


def transpose_input(src, dst, dims):
    """Raw float32 NCHW input -> NHWC (for running the NHWC model on the NCHW model's input)."""
    import numpy as np
    n, c, h, w = (int(d) for d in dims)
    np.fromfile(src, dtype="<f4").reshape(n, c, h, w).transpose(0, 2, 3, 1).tofile(dst)


def main():
    if len(sys.argv) == 8 and sys.argv[1] == "--transpose-input":
        transpose_input(sys.argv[2], sys.argv[3], sys.argv[4:8])
        return
    if len(sys.argv) != 3:
        sys.exit("usage: make_nhwc.py IN.onnx OUT.onnx\n"
                 "       make_nhwc.py --transpose-input NCHW.bin NHWC.bin N C H W")
    model = convert(onnx.load(sys.argv[1]))
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[2])
    hist = {}
    for n in model.graph.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    print(sys.argv[2], " ".join(f"{k}:{v}" for k, v in sorted(hist.items())))


if __name__ == "__main__":
    main()
