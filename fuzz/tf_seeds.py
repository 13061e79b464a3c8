#!/usr/bin/python3
"""Seeds of the graphdef and tfjs fuzz targets (fuzz/targets/fuzz_graphdef.cpp, fuzz_tfjs.cpp):
the test models of tests/data/tf and hostile inputs built here byte by byte (truncated
protobuf, lengths and shapes far over any limit, unknown dtypes, short tensor data, cycles,
a TF1 while loop, bad input names; for TF.js also shards shorter than the manifest says,
paths leaving the folder, damaged JSON and quantization).

  fuzz/tf_seeds.py CORPUS_DIR      (fuzz/seed-corpus.sh calls it with fuzz/corpus)

A tfjs seed is model.json, a NUL byte, then the bytes of the shard "s.bin".
"""
import json
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


# ---- protobuf wire format, enough for GraphDef ----------------------------------------
def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):
    """A length-delimited field (wire type 2)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vfield(num, n):
    """A varint field (wire type 0)."""
    return varint(num << 3) + varint(n)


def shape(*dims):
    return b"".join(field(2, vfield(1, d & (2**64 - 1))) for d in dims)


def tensor(dtype, dims, content=b""):
    t = vfield(1, dtype) + field(2, shape(*dims))
    if content:
        t += field(4, content)
    return t


def attr(key, value):
    return field(5, field(1, key) + field(2, value))


def node(name, op, inputs=(), attrs=b""):
    return field(1, field(1, name) + field(2, op) + b"".join(field(3, i) for i in inputs) + attrs)


DT_FLOAT, DT_INT32 = 1, 3
F32 = attr("T", vfield(6, DT_FLOAT))


def placeholder(name):
    return node(name, "Placeholder", attrs=attr("dtype", vfield(6, DT_FLOAT)) + attr("shape", field(7, shape(1, 4))))


def const(name, dtype, dims, content):
    return node(name, "Const", attrs=attr("dtype", vfield(6, dtype)) + attr("value", field(8, tensor(dtype, dims, content))))


def graphdef_seeds():
    with open(os.path.join(ROOT, "tests/data/tf/convnet.pb"), "rb") as f:
        convnet = f.read()
    small = placeholder("x") + const("c", DT_FLOAT, [4], struct.pack("<4f", 1, 2, 3, 4)) + node("y", "AddV2", ["x", "c"], F32)
    loop = (placeholder("x") + const("one", DT_FLOAT, [], struct.pack("<f", 1))
            + node("enter", "Enter", ["x"], F32 + attr("frame_name", field(2, "loop")))
            + node("merge", "Merge", ["enter", "next"], F32 + attr("N", vfield(3, 2)))
            + node("add", "AddV2", ["merge", "one"], F32)
            + node("next", "NextIteration", ["add"], F32)
            + node("exit", "Exit", ["merge"], F32))
    return {
        "convnet.pb": convnet,
        "small.pb": small,
        "tf1-while-loop.pb": loop,
        "hostile-truncated-half.pb": convnet[: len(convnet) // 2],
        "hostile-truncated-in-varint.pb": small[:3] + b"\xff\xff",
        "hostile-length-2-62.pb": varint(1 << 3 | 2) + varint(1 << 62) + b"\x0a\x01x",
        "hostile-huge-shape.pb": placeholder("x") + const("c", DT_FLOAT, [1 << 40, 1 << 40], b"\0" * 16)
        + node("y", "AddV2", ["x", "c"], F32),
        "hostile-negative-dim.pb": const("c", DT_FLOAT, [-7, 2], b"\0" * 8),
        "hostile-bad-dtype.pb": const("c", 999, [2], b"\0" * 8),
        "hostile-short-content.pb": const("c", DT_FLOAT, [4], b"\0\0\0"),
        "hostile-cycle.pb": node("a", "Identity", ["b"], F32) + node("b", "Identity", ["a"], F32),
        "hostile-self-loop-merge.pb": node("m", "Merge", ["m"], F32),
        "hostile-missing-input.pb": placeholder("x") + node("y", "Relu", ["nothere:0"], F32),
        "hostile-port-overflow.pb": placeholder("x") + node("y", "Relu", ["x:99999999999999999999"], F32),
        "hostile-duplicate-names.pb": placeholder("x") + placeholder("x"),
        "hostile-control-then-data.pb": placeholder("x") + node("y", "AddV2", ["^x", "x"], F32),
        "hostile-empty-name.pb": node("", "Relu"),
        "hostile-attr-wrong-wire-type.pb": node("c", "Const", attrs=field(5, field(1, "value") + vfield(2, 7))),
    }


# ---- TF.js model.json + shard --------------------------------------------------------
def tfjs(model, shard=b""):
    return json.dumps(model, separators=(",", ":")).encode() + b"\0" + shard


def tfjs_seeds():
    out = {}
    base = {}
    for kind in ("f32", "u8", "u16", "f16"):
        d = os.path.join(ROOT, "tests/data/tf", "convnet_" + kind)
        with open(os.path.join(d, "model.json")) as f:
            m = json.load(f)
        with open(os.path.join(d, "group1-shard1of1.bin"), "rb") as f:
            shard = f.read()
        m["weightsManifest"][0]["paths"] = ["s.bin"]
        base[kind] = (m, shard)
        out["convnet_%s.json" % kind] = tfjs(m, shard)
    m, shard = base["u8"]  # the smallest shard: the variants need no more
    ws = m["weightsManifest"][0]["weights"]

    def variant(name, change, data=shard):
        v = json.loads(json.dumps(m))
        change(v, v["weightsManifest"][0]["weights"])
        out[name] = tfjs(v, data)

    out["hostile-shard-shorter-than-manifest.json"] = tfjs(m, shard[: len(shard) - 5])
    out["hostile-no-shard-file.json"] = json.dumps(m).encode()
    variant("hostile-huge-shape.json", lambda v, w: w[0].update(shape=[1 << 40, 1 << 40]))
    variant("hostile-shape-overflow.json", lambda v, w: w[0].update(shape=[1 << 62, 1 << 62, 16]))
    variant("hostile-negative-dim.json", lambda v, w: w[0].update(shape=[-1, 8]))
    variant("hostile-bad-dtype.json", lambda v, w: w[0].update(dtype="complex64"))
    variant("hostile-string-dtype.json", lambda v, w: w[0].update(dtype="string"))
    variant("hostile-quantization-bad-dtype.json", lambda v, w: w[0].update(quantization={"dtype": "int4", "min": 0, "scale": 1}))
    variant("hostile-quantization-no-scale.json", lambda v, w: w[0].update(quantization={"dtype": "uint8"}))
    variant("hostile-path-parent.json", lambda v, w: v["weightsManifest"][0].update(paths=["../s.bin"]))
    variant("hostile-path-absolute.json", lambda v, w: v["weightsManifest"][0].update(paths=["/etc/hostname"]))
    variant("hostile-weight-names-no-const.json", lambda v, w: w[0].update(name="nothere"))
    variant("hostile-duplicate-weight.json", lambda v, w: w.append(dict(w[0])))
    variant("hostile-manifest-not-list.json", lambda v, w: v.update(weightsManifest={"paths": 1}))
    variant("hostile-format-layers.json", lambda v, w: v.update(format="layers-model"))
    variant("hostile-signature-bad-port.json", lambda v, w: v.update(signature={"outputs": {"y": {"name": "conv1:abc"}}}))
    variant("hostile-cycle.json", lambda v, w: v["modelTopology"]["node"].extend(
        [{"name": "a", "op": "Identity", "input": ["b"]}, {"name": "b", "op": "Identity", "input": ["a"]}]))
    variant("hostile-node-without-op.json", lambda v, w: v["modelTopology"]["node"].append({"name": "z"}))
    variant("hostile-attr-bad-base64.json", lambda v, w: v["modelTopology"]["node"][2]["attr"].update(padding={"s": "!!!"}))
    variant("hostile-attr-int-not-number.json", lambda v, w: v["modelTopology"]["node"][2]["attr"].update(
        strides={"list": {"i": ["one", "1", "1", "1"]}}))
    text = json.dumps(m).encode()
    out["hostile-truncated-json.json"] = text[: len(text) // 2] + b"\0" + shard
    out["hostile-json-array.json"] = b"[1, 2, 3]\0"
    out["hostile-no-topology.json"] = b'{"format": "graph-model", "weightsManifest": []}\0'
    return out


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    for target, seeds in (("graphdef", graphdef_seeds()), ("tfjs", tfjs_seeds())):
        d = os.path.join(argv[0], target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
