#!/usr/bin/python3
"""Writes the small TensorFlow test models under tests/data/tf/: GraphDefs (.pb) and TF.js
graph models (model.json + shards) built from graphfuse's own engine/io/graphdef.proto, with
seeded weights. The chains are what TF.js's converter and TF's freeze leave unfused:
Conv2D / DepthwiseConv2dNative / MatMul + BiasAdd or an AddV2 of a constant + an activation,
FusedBatchNormV3 after a convolution, Pad before one.

usage: /usr/bin/python3 tests/tfjs/make_models.py [OUT_DIR]   (default tests/data/tf)
Needs protoc, python3-protobuf and numpy (Debian packages)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "tf")

with tempfile.TemporaryDirectory() as tmp:
    subprocess.check_call(["protoc", "-I", os.path.join(ROOT, "engine", "io"), "--python_out", tmp, "graphdef.proto"])
    sys.path.insert(0, tmp)
    import graphdef_pb2 as pb  # noqa: E402
    from google.protobuf import json_format  # noqa: E402

    rng = np.random.default_rng(45)

    class G:
        def __init__(self):
            self.gd = pb.GraphDef()
            self.gd.versions.producer = 1286
            self.quant = {}  # weight name -> TF.js quantization dtype

        def node(self, name, op, inputs=(), **attrs):
            n = self.gd.node.add()
            n.name, n.op = name, op
            n.input.extend(inputs)
            for k, v in attrs.items():
                e = n.attr.add()
                e.key = k
                e.value.CopyFrom(v)
            return name

        def const(self, name, arr, quant=None):
            arr = np.asarray(arr)
            dt = pb.DT_FLOAT if arr.dtype == np.float32 else pb.DT_INT32 if arr.dtype == np.int32 else pb.DT_BOOL
            t = pb.TensorProto(dtype=dt)
            for d in arr.shape:
                t.tensor_shape.dim.add().size = d
            if arr.size == 1:
                {pb.DT_FLOAT: t.float_val, pb.DT_INT32: t.int_val, pb.DT_BOOL: t.bool_val}[dt].append(arr.item())
            else:
                t.tensor_content = arr.tobytes()
            if quant:
                self.quant[name] = quant
            return self.node(name, "Const", value=pb.AttrValue(tensor=t), dtype=pb.AttrValue(type=dt))

    def s(x):
        return pb.AttrValue(s=x.encode())

    def ints(*x):
        a = pb.AttrValue()
        a.list.i.extend(x)
        return a

    def strs(*x):
        a = pb.AttrValue()
        a.list.s.extend(v.encode() for v in x)
        return a

    T = pb.AttrValue(type=pb.DT_FLOAT)

    def conv(g, name, x, cin, cout, k=3, stride=1, padding="SAME", depthwise=False, quant=None):
        shape = (k, k, cin, 1) if depthwise else (k, k, cin, cout)
        w = g.const(name + "/w", (rng.standard_normal(shape) * (1.0 / np.sqrt(k * k * cin))).astype(np.float32), quant)
        op = "DepthwiseConv2dNative" if depthwise else "Conv2D"
        extra = {} if depthwise else {"explicit_paddings": ints(), "use_cudnn_on_gpu": pb.AttrValue(b=True)}
        return g.node(name, op, [x, w], T=T, strides=ints(1, stride, stride, 1), padding=s(padding),
                      data_format=s("NHWC"), dilations=ints(1, 1, 1, 1), **extra)

    def vec(g, name, n, quant=None):
        return g.const(name, (rng.standard_normal(n) * 0.1).astype(np.float32), quant)

    def placeholder(g, name, dims):
        shape = pb.TensorShapeProto()
        for d in dims:
            shape.dim.add().size = d
        return g.node(name, "Placeholder", dtype=T, shape=pb.AttrValue(shape=shape))

    def convnet(quant=None):
        """Conv+BiasAdd+Relu, depthwise+AddV2+Relu6, conv+FusedBatchNormV3+Relu, Pad+conv,
        conv+AddV2+LeakyRelu/Elu/Sigmoid/Tanh, mean + MatMul+BiasAdd + Softmax."""
        g = G()
        x = placeholder(g, "input", [1, 16, 16, 3])
        c = conv(g, "conv1", x, 3, 8, quant=quant)
        c = g.node("conv1/bias", "BiasAdd", [c, vec(g, "conv1/b", 8, quant)], T=T, data_format=s("NHWC"))
        c = g.node("conv1/relu", "Relu", [c], T=T)
        d = conv(g, "dw1", c, 8, 8, depthwise=True, quant=quant)
        d = g.node("dw1/add", "AddV2", [d, vec(g, "dw1/b", 8, quant)], T=T)
        d = g.node("dw1/relu6", "Relu6", [d], T=T)
        b = conv(g, "conv2", d, 8, 12, stride=2, quant=quant)
        bn = [vec(g, "bn/" + k, 12) for k in ("scale", "offset", "mean")]
        var = g.const("bn/var", (rng.random(12) + 0.5).astype(np.float32))
        b = g.node("bn", "FusedBatchNormV3", [b] + bn + [var], T=T, U=T, epsilon=pb.AttrValue(f=0.001),
                   data_format=s("NHWC"), is_training=pb.AttrValue(b=False), exponential_avg_factor=pb.AttrValue(f=1.0))
        b = g.node("bn/relu", "Relu", [b], T=T)
        pads = g.const("pad/paddings", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32))
        p = g.node("pad", "Pad", [b, pads], T=T, Tpaddings=pb.AttrValue(type=pb.DT_INT32))
        p = conv(g, "conv3", p, 12, 12, padding="VALID", quant=quant)
        p = g.node("conv3/add", "AddV2", [p, vec(g, "conv3/b", 12, quant)], T=T)
        p = g.node("conv3/leaky", "LeakyRelu", [p], T=T, alpha=pb.AttrValue(f=0.2))
        e = conv(g, "conv4", p, 12, 12, k=1, quant=quant)
        e = g.node("conv4/bias", "BiasAdd", [e, vec(g, "conv4/b", 12, quant)], T=T, data_format=s("NHWC"))
        e = g.node("conv4/elu", "Elu", [e], T=T)
        sg = conv(g, "conv5", e, 12, 12, k=1, quant=quant)
        sg = g.node("conv5/bias", "BiasAdd", [sg, vec(g, "conv5/b", 12, quant)], T=T, data_format=s("NHWC"))
        sg = g.node("conv5/sigmoid", "Sigmoid", [sg], T=T)
        axes = g.const("mean/axes", np.array([1, 2], dtype=np.int32))
        m = g.node("mean", "Mean", [sg, axes], T=T, Tidx=pb.AttrValue(type=pb.DT_INT32), keep_dims=pb.AttrValue(b=False))
        w = g.const("fc/w", (rng.standard_normal((12, 5)) * 0.3).astype(np.float32), quant)
        f = g.node("fc", "MatMul", [m, w], T=T, transpose_a=pb.AttrValue(b=False), transpose_b=pb.AttrValue(b=False))
        f = g.node("fc/bias", "BiasAdd", [f, vec(g, "fc/b", 5, quant)], T=T, data_format=s("NHWC"))
        f = g.node("fc/tanh", "Tanh", [f], T=T)
        g.node("output", "Softmax", [f], T=T)
        return g

    def blocks():
        """What the newer rules/tf files take: a depthwise convolution with channel multiplier 2
        + AddV2 + Relu, Pad + VALID depthwise, a batch norm written as Mul + Add after a Conv2D,
        a Conv2D without bias + Sigmoid, Conv2D + BiasAdd + Prelu, MatMul + AddV2 of a vector + Sigmoid."""
        g = G()
        x = placeholder(g, "input", [1, 12, 10, 4])
        w = g.const("dwm/w", (rng.standard_normal((3, 3, 4, 2)) * 0.3).astype(np.float32))
        d = g.node("dwm", "DepthwiseConv2dNative", [x, w], T=T, strides=ints(1, 1, 1, 1), padding=s("SAME"),
                   data_format=s("NHWC"), dilations=ints(1, 1, 1, 1))
        d = g.node("dwm/add", "AddV2", [d, vec(g, "dwm/b", 8)], T=T)
        d = g.node("dwm/relu", "Relu", [d], T=T)
        pads = g.const("pad/paddings", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], dtype=np.int32))
        p = g.node("pad", "Pad", [d, pads], T=T, Tpaddings=pb.AttrValue(type=pb.DT_INT32))
        p = conv(g, "dwp", p, 8, 8, stride=2, padding="VALID", depthwise=True)
        p = g.node("dwp/add", "AddV2", [p, vec(g, "dwp/b", 8)], T=T)
        p = g.node("dwp/relu6", "Relu6", [p], T=T)
        c = conv(g, "conv1", p, 8, 6, k=1)
        c = g.node("bn/mul", "Mul", [c, g.const("bn/scale", (rng.random(6) + 0.5).astype(np.float32))], T=T)
        c = g.node("bn/add", "AddV2", [c, vec(g, "bn/offset", 6)], T=T)
        c = g.node("bn/relu", "Relu", [c], T=T)
        c = conv(g, "conv2", c, 6, 6)
        c = g.node("conv2/sigmoid", "Sigmoid", [c], T=T)
        c = conv(g, "conv3", c, 6, 6, k=1)
        c = g.node("conv3/bias", "BiasAdd", [c, vec(g, "conv3/b", 6)], T=T, data_format=s("NHWC"))
        c = g.node("conv3/prelu", "Prelu", [c, g.const("conv3/alpha", (rng.random(6) * 0.3).astype(np.float32))], T=T)
        shape = g.const("flat/shape", np.array([1, -1], dtype=np.int32))
        f = g.node("flat", "Reshape", [c, shape], T=T, Tshape=pb.AttrValue(type=pb.DT_INT32))
        w = g.const("fc/w", (rng.standard_normal((6 * 6 * 5, 4)) * 0.1).astype(np.float32))
        f = g.node("fc", "MatMul", [f, w], T=T, transpose_a=pb.AttrValue(b=False), transpose_b=pb.AttrValue(b=False))
        f = g.node("fc/add", "AddV2", [f, vec(g, "fc/b", 4)], T=T)
        g.node("output", "Sigmoid", [f], T=T)
        return g

    def nchw():
        """An NCHW graph (a model exported for GPUs): Conv2D + Relu, Conv2D + Relu6, in NCHW.
        TF.js's wasm backend refuses it as it is; rules/tf's layout rules make it NHWC."""
        g = G()
        x = placeholder(g, "input", [1, 3, 12, 10])
        c = x
        for i, (cin, cout, act) in enumerate(((3, 8, "Relu"), (8, 8, "Relu6"))):
            w = g.const("conv%d/w" % i, (rng.standard_normal((3, 3, cin, cout)) * 0.3).astype(np.float32))
            c = g.node("conv%d" % i, "Conv2D", [c, w], T=T, strides=ints(1, 1, 1, 1), padding=s("SAME"),
                       data_format=s("NCHW"), dilations=ints(1, 1, 1, 1))
            c = g.node("conv%d/act" % i, act, [c], T=T)
        g.node("output", "Identity", [c], T=T)
        return g

    def write_pb(g, path):
        with open(path, "wb") as f:
            f.write(g.gd.SerializeToString())

    def write_tfjs(g, folder):
        """model.json as TF.js's converter writes it: the topology without tensor contents,
        the weights in one shard, float32 or quantized as g.quant says."""
        os.makedirs(folder, exist_ok=True)
        nodes, specs, blob = [], [], b""
        for n in g.gd.node:
            d = {"name": n.name, "op": n.op}
            if n.input:
                d["input"] = list(n.input)
            attrs = {}
            for e in n.attr:
                v = pb.AttrValue()
                v.CopyFrom(e.value)
                if n.op == "Const" and e.key == "value":
                    t = v.tensor
                    dt = {pb.DT_FLOAT: np.float32, pb.DT_INT32: np.int32, pb.DT_BOOL: np.bool_}[t.dtype]
                    shape = [d_.size for d_ in t.tensor_shape.dim]
                    if t.tensor_content:
                        arr = np.frombuffer(t.tensor_content, dtype=dt).reshape(shape)
                    else:
                        vals = t.float_val if t.dtype == pb.DT_FLOAT else t.int_val if t.dtype == pb.DT_INT32 else t.bool_val
                        arr = np.array(list(vals), dtype=dt).reshape(shape)
                    spec = {"name": n.name, "shape": shape,
                            "dtype": {np.float32: "float32", np.int32: "int32", np.bool_: "bool"}[dt]}
                    q = g.quant.get(n.name)
                    if q == "float16":
                        spec["quantization"] = {"dtype": "float16"}
                        blob += arr.astype(np.float16).tobytes()
                    elif q in ("uint8", "uint16"):
                        top = 255 if q == "uint8" else 65535
                        lo, hi = float(arr.min()), float(arr.max())
                        scale = (hi - lo) / top if hi > lo else 1.0
                        spec["quantization"] = {"min": lo, "scale": scale, "dtype": q}
                        qa = np.clip(np.round((arr.astype(np.float64) - lo) / scale), 0, top)
                        blob += qa.astype(np.uint8 if q == "uint8" else np.uint16).tobytes()
                    else:
                        blob += arr.tobytes()
                    specs.append(spec)
                    t.ClearField("tensor_content")
                    t.ClearField("float_val")
                    t.ClearField("int_val")
                    t.ClearField("bool_val")
                attrs[e.key] = json_format.MessageToDict(v)
            if attrs:
                d["attr"] = attrs
            nodes.append(d)
        with open(os.path.join(folder, "group1-shard1of1.bin"), "wb") as f:
            f.write(blob)
        model = {"format": "graph-model", "generatedBy": "graphfuse tests/tfjs/make_models.py",
                 "convertedBy": "graphfuse tests/tfjs/make_models.py",
                 "modelTopology": {"node": nodes, "library": {}, "versions": {"producer": g.gd.versions.producer}},
                 "weightsManifest": [{"paths": ["group1-shard1of1.bin"], "weights": specs}]}
        with open(os.path.join(folder, "model.json"), "w") as f:
            json.dump(model, f, separators=(",", ":"))

    os.makedirs(OUT, exist_ok=True)
    g = convnet()
    write_pb(g, os.path.join(OUT, "convnet.pb"))
    write_tfjs(g, os.path.join(OUT, "convnet_f32"))
    write_tfjs(convnet("uint8"), os.path.join(OUT, "convnet_u8"))
    write_tfjs(convnet("uint16"), os.path.join(OUT, "convnet_u16"))
    write_tfjs(convnet("float16"), os.path.join(OUT, "convnet_f16"))
    write_tfjs(blocks(), os.path.join(OUT, "blocks_f32"))
    # Beside tests/data/tf, not in it: tfjs_judge runs every model there on TF.js's wasm
    # backend, which refuses NCHW convolutions.
    write_tfjs(nchw(), os.path.join(OUT, "..", "tf_nchw"))
    print("wrote", OUT)
