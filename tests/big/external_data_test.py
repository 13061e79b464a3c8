#!/usr/bin/python3
"""ctest external_data: ONNX external data through `graphfuse apply`/`convert`.

A small generated stack (bench/big/gen_external.py, 3 x MatMul 64x64 + Add + Relu, weights
external above a 1 KiB threshold) is rewritten with each --external-data mode; the onnx
package checks and loads every output, untouched tensors must be byte-identical, the
rewritten model must compute what the original does (a numpy evaluator of the few ops), `same` must write
no data file, and inline -> external -> inline must give the same bytes. Hostile
external-data fields must fail with a clear error and leave no output.
Usage: external_data_test.py GRAPHFUSE RULES_DIR GEN_SCRIPT. Exit 77 without onnx/numpy.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as e:  # pragma: no cover
    print(f"skip: {e}")
    sys.exit(77)

GF, RULES, GEN = sys.argv[1:4]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def run(*args, ok=True):
    p = subprocess.run([GF, *args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise SystemExit(f"graphfuse {' '.join(args)} failed:\n{p.stdout}{p.stderr}")
    return p


def tensors(path):
    m = onnx.load(path)  # loads external data
    return {t.name: numpy_helper.to_array(t).tobytes() for t in m.graph.initializer}


def forms(path):
    m = onnx.load(path, load_external_data=False)
    return {t.name: {e.key: e.value for e in t.external_data} if t.data_location == 1 else None
            for t in m.graph.initializer}


def outputs(path, x):
    """Runs the model's MatMul/Add/Relu/Gemm nodes in numpy (Debian's onnx has no reference evaluator)."""
    m = onnx.load(path)
    env = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    env["input"] = x
    for n in m.graph.node:
        a = {at.name: onnx.helper.get_attribute_value(at) for at in n.attribute}
        v = [env[i] for i in n.input]
        if n.op_type == "MatMul":
            r = v[0] @ v[1]
        elif n.op_type == "Add":
            r = v[0] + v[1]
        elif n.op_type == "Relu":
            r = np.maximum(v[0], 0)
        elif n.op_type == "Gemm":
            A = v[0].T if a.get("transA", 0) else v[0]
            B = v[1].T if a.get("transB", 0) else v[1]
            r = a.get("alpha", 1.0) * (A @ B) + (a.get("beta", 1.0) * v[2] if len(v) > 2 else 0)
        else:
            raise SystemExit(f"{path}: the test evaluator has no {n.op_type}")
        env[n.output[0]] = r
    return env[m.graph.output[0].name]


with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "m.onnx")
    subprocess.run([sys.executable, GEN, src, "--layers", "3", "--dim", "64"], check=True, capture_output=True)
    original = tensors(src)
    x = np.random.default_rng(0).standard_normal((2, 64), dtype=np.float32)
    want = outputs(src, x)

    # Default: the input's form (external stays external), beside the output.
    os.mkdir(os.path.join(d, "out"))
    o = os.path.join(d, "out", "o.onnx")
    out = run("apply", "-r", RULES, src, "-o", o).stdout
    check("rewrite" in out, f"no rule fired on the stack: {out}")
    onnx.checker.check_model(o)
    check(sorted(os.listdir(os.path.join(d, "out"))) == ["o.onnx", "o.onnx.data"], f"default output files: {os.listdir(os.path.join(d, 'out'))}")
    f = forms(o)
    check(all(f[n] and f[n]["location"] == "o.onnx.data" for n in ("w0", "w1", "w2")), f"weights not external: {f}")
    check(all(f[n] is None for n in ("b0", "b1", "b2")), f"small biases not inline: {f}")
    got = tensors(o)
    check(all(got[n] == original[n] for n in original), "untouched tensors differ (default)")
    check(np.allclose(outputs(o, x), want, rtol=1e-4, atol=1e-5), "rewritten model computes something else")

    # same: unchanged tensors point into the input's data file; nothing new is written.
    s = os.path.join(d, "s.onnx")
    run("apply", "-r", RULES, src, "-o", s, "--external-data", "same")
    check(not os.path.exists(s + ".data"), "--external-data same wrote a data file for unchanged tensors")
    f = forms(s)
    check(all(f[n] and f[n]["location"] == "m.onnx.data" for n in ("w0", "w1", "w2")), f"same: {f}")
    check(tensors(s) == original, "untouched tensors differ (same)")
    check(np.allclose(outputs(s, x), want, rtol=1e-4, atol=1e-5), "same: computes something else")
    p = run("apply", "-r", RULES, src, "-o", os.path.join(d, "out", "s2.onnx"), "--external-data", "same", ok=False)
    check(p.returncode != 0 and "outside the output's folder" in p.stderr, f"same into another folder: {p.stderr}")

    # inline -> external -> inline: the same bytes.
    i1, e1, i2 = (os.path.join(d, n) for n in ("i1.onnx", "e1.onnx", "i2.onnx"))
    run("convert", src, i1, "--external-data", "inline")
    check(not os.path.exists(i1 + ".data") and forms(i1) == {n: None for n in original}, "inline output has external data")
    run("convert", i1, e1, "--external-threshold", "100", "--external-data", "external")
    check(all(v is not None for v in forms(e1).values()), "external with threshold 100 left tensors inline")
    run("convert", e1, i2, "--external-data", "inline")
    check(open(i1, "rb").read() == open(i2, "rb").read(), "inline -> external -> inline changed the bytes")
    run("convert", i1, os.path.join(d, "i3.onnx"))
    check(not os.path.exists(os.path.join(d, "i3.onnx.data")), "an inline input came out external by default")

    # Hostile external-data fields: a clear error, non-zero exit, no output.
    def hostile(name, edit, expect):
        m = onnx.load(src, load_external_data=False)
        t = m.graph.initializer[2]  # w1
        kv = {e.key: e.value for e in t.external_data}
        edit(kv)
        del t.external_data[:]
        for k, v in kv.items():
            e = t.external_data.add()
            e.key, e.value = k, v
        bad = os.path.join(d, f"bad_{name}.onnx")
        with open(bad, "wb") as fh:
            fh.write(m.SerializeToString())
        res = os.path.join(d, f"res_{name}.onnx")
        p = run("apply", "-r", RULES, bad, "-o", res, ok=False)
        check(p.returncode == 1 and "error:" in p.stderr and expect in p.stderr,
              f"hostile {name}: rc {p.returncode}, stderr {p.stderr!r}")
        check(not os.path.exists(res) and not os.path.exists(res + ".data"), f"hostile {name}: output written")

    hostile("offset_past_end", lambda kv: kv.update(offset="999999999"), "past the end")
    hostile("length_past_end", lambda kv: kv.update(length="40000"), "past the end")
    hostile("negative_offset", lambda kv: kv.update(offset="-4"), "negative")
    hostile("negative_length", lambda kv: kv.update(length="-1"), "negative")
    hostile("not_a_number", lambda kv: kv.update(offset="12abc"), "not a number")
    hostile("dotdot", lambda kv: kv.update(location="../m.onnx.data"), "leaves the model's folder")
    hostile("absolute", lambda kv: kv.update(location="/etc/passwd"), "leaves the model's folder")
    hostile("missing_file", lambda kv: kv.update(location="nope.data"), "cannot open external data file")
    hostile("no_location", lambda kv: kv.pop("location"), "has no location")
    hostile("wrong_length", lambda kv: kv.update(length="100"), "bytes of data")
    hostile("directory", lambda kv: kv.update(location="out"), "not a regular file")
    # Overlapping ranges are legal (the bytes are read twice): w1 reads w0's bytes.
    hostile_ok = onnx.load(src, load_external_data=False)
    for e in hostile_ok.graph.initializer[2].external_data:
        if e.key == "offset":
            e.value = "0"
    ov = os.path.join(d, "overlap.onnx")
    with open(ov, "wb") as fh:
        fh.write(hostile_ok.SerializeToString())
    run("apply", "-r", RULES, ov, "-o", os.path.join(d, "overlap_out.onnx"))
    # A data file shorter than the offsets claim.
    short = os.path.join(d, "short")
    os.mkdir(short)
    with open(src, "rb") as a, open(os.path.join(short, "m.onnx"), "wb") as b:
        b.write(a.read())
    with open(src + ".data", "rb") as a, open(os.path.join(short, "m.onnx.data"), "wb") as b:
        b.write(a.read()[:20000])
    p = run("apply", "-r", RULES, os.path.join(short, "m.onnx"), "-o", os.path.join(short, "o.onnx"), ok=False)
    check(p.returncode == 1 and "shorter than the model says" in p.stderr, f"short data file: {p.stderr!r}")
    check(not os.path.exists(os.path.join(short, "o.onnx")), "short data file: output written")

print("external_data:", "FAILED" if failures else "ok", f"({len(failures)} failures)")
sys.exit(1 if failures else 0)
