#!/usr/bin/python3
"""ONNX's backend test suite (Debian's libonnx-testdata) against graphfuse.

For every case (a model.onnx and test_data_set_0/{input,output}_*.pb) this checks
  ort   the original model in ONNX Runtime against the expected outputs (the baseline:
        a case ONNX Runtime fails here says nothing about graphfuse),
  (a)   `apply` with the shipped rule libraries, the result run by ONNX Runtime,
  (b)   the inputs frozen as initializers, `apply --fold all`, the result run by ONNX
        Runtime; and whether it folded completely (no compute node left),
  (c)   graphfuse's reference executor, on every case whose ops it implements.
The work is batched: one `graphfuse backend-test` process for all cases (resumed after a
case that brings it down), one node process for all ONNX Runtime runs.

Exit status: 0 when every case matches tests/backend/expected.txt, 1 otherwise, 77 when
the test data, onnx/numpy or onnxruntime-node are missing (ctest reports a skip).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator")


def skip(msg):
    print(f"skipped: {msg}")
    sys.exit(SKIP)


try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as e:  # Debian's python3-onnx and python3-numpy
    skip(f"python module missing ({e}); run with /usr/bin/python3")


def tensor_inputs(model):
    """Graph inputs that no initializer feeds, or None when one is not a tensor."""
    inits = {t.name for t in model.graph.initializer}
    out = []
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        if not vi.type.HasField("tensor_type"):
            return None
        out.append(vi)
    return out


def write_raw(arr, path):
    if arr.dtype == np.bool_:
        arr = arr.astype(np.uint8)
    np.ascontiguousarray(arr).tofile(path)


def dtype_name(arr):
    return "bool" if arr.dtype == np.bool_ else str(arr.dtype)


SUPPORTED = {"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "int32", "uint32",
             "int64", "uint64", "bool"}


def prepare(case_dir, name, work):
    """The manifest entry of one case, or (None, reason) when the runner cannot feed it."""
    model_path = os.path.join(case_dir, "model.onnx")
    data = os.path.join(case_dir, "test_data_set_0")
    if not os.path.isdir(data):
        return None, "no test_data_set_0"
    try:
        model = onnx.load(model_path)
    except Exception as e:  # noqa: BLE001 - a model onnx cannot read is reported, not fatal
        return None, f"onnx cannot load the model: {e}"
    feeds = tensor_inputs(model)
    if feeds is None:
        return None, "non-tensor input"
    if any(not o.type.HasField("tensor_type") for o in model.graph.output):
        return None, "non-tensor output"
    out_dir = os.path.join(work, name.replace("/", "__"))
    os.makedirs(out_dir, exist_ok=True)
    entry = {"name": name, "model": model_path, "inputs": [], "outputs": [],
             "applied": os.path.join(out_dir, "applied.onnx")}
    arrays = {}
    for kind, vis in (("input", feeds), ("output", list(model.graph.output))):
        files = sorted(glob.glob(os.path.join(data, f"{kind}_*.pb")),
                       key=lambda p: int(os.path.basename(p)[len(kind) + 1:-3]))
        if len(files) != len(vis):
            return None, f"{len(files)} {kind} files for {len(vis)} graph {kind}s"
        for k, (f, vi) in enumerate(zip(files, vis)):
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            try:
                arr = numpy_helper.to_array(t)
            except Exception as e:  # noqa: BLE001
                return None, f"{f}: {e}"
            # numpy has no bfloat16: the data files hold its bit patterns as uint16 (data_type 4
            # in this package), which must still be fed and compared as the graph's bfloat16
            # (a uint16 input would change what Cast reads).
            dt = dtype_name(arr)
            if vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 and dt == "uint16":
                dt = "bfloat16"
                t.data_type = onnx.TensorProto.BFLOAT16  # same bits, in int32_data or raw_data
            if dt not in SUPPORTED:
                return None, f"{kind} of type {dt}"
            raw = os.path.join(out_dir, f"{kind}_{k}.bin")
            write_raw(arr, raw)
            entry[kind + "s"].append({"name": vi.name, "dtype": dt, "shape": list(arr.shape), "file": raw})
            if kind == "input":
                arrays[vi.name] = t
    # (b): the same model with its inputs as initializers, so that everything is constant.
    frozen = onnx.ModelProto()
    frozen.CopyFrom(model)
    keep = [vi for vi in frozen.graph.input if vi.name not in arrays]
    del frozen.graph.input[:]
    frozen.graph.input.extend(keep)
    for n, t in arrays.items():
        init = onnx.TensorProto()
        init.CopyFrom(t)  # the file's own tensor: its element type kept (bfloat16 included)
        init.name = n
        frozen.graph.initializer.append(init)
    entry["frozen"] = os.path.join(out_dir, "frozen.onnx")
    entry["folded"] = os.path.join(out_dir, "folded.onnx")
    onnx.save(frozen, entry["frozen"])
    return entry, None


def run_graphfuse(graphfuse, manifest_path, n, rules):
    """JSON results per case index; a case that crashes the process is recorded and skipped."""
    results = {}
    first = 0
    rule_args = [a for r in rules for a in ("--rules", r)]
    while first < n:
        p = subprocess.run([graphfuse, "backend-test", manifest_path, "--first", str(first)] + rule_args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        last = first - 1
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r["index"]] = r
                last = r["index"]
        if p.returncode == 0 and last == n - 1:
            break
        crashed = last + 1
        msg = f"graphfuse exited with {p.returncode}: {p.stderr.strip()[-300:]}"
        results[crashed] = {"index": crashed, "crash": msg}
        first = crashed + 1
    return results


def worse_than(old, new):
    """Why verdict `new` is worse than the expected `old` (dicts of check -> value), or ''."""
    for k in ("a", "b"):
        if old.get(k) == "pass" and new.get(k) != "pass":
            return f"({k}) no longer passes"
    if old.get("folded") == "complete" and new.get("folded") != "complete":
        return "(b) no longer folds completely"
    if old.get("c") == "pass" and new.get("c") != "pass":
        return "(c) no longer passes"
    if new.get("c") in ("mismatch", "crash") and old.get("c") != new.get("c"):
        return f"(c) {new['c']}"
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphfuse", required=True)
    ap.add_argument("--rules-dir", action="append", default=[], help="rule library directory (repeatable)")
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data")
    ap.add_argument("--expected", default=os.path.join(HERE, "expected.txt"))
    ap.add_argument("--write-expected", action="store_true", help="record the present results as expected")
    ap.add_argument("--results", help="write every case's results as JSON here")
    ap.add_argument("--filter", help="only cases whose name contains this")
    ap.add_argument("--work", help="work directory (default: a temporary one)")
    args = ap.parse_args()

    if not os.path.isdir(args.data):
        skip(f"no ONNX backend test data ({args.data}; Debian package libonnx-testdata)")
    ort_js = os.path.join(HERE, "ort_cases.js")
    install = os.path.join(HERE, "..", "ort", "install.sh")
    rc = subprocess.run([install]).returncode
    if rc == 2:
        skip("ONNX Runtime (onnxruntime-node) is unavailable")
    if rc != 0:
        print("error: installing onnxruntime-node failed")
        return 1

    rules = []
    for d in args.rules_dir:
        rules += sorted(glob.glob(os.path.join(d, "*.yaml")))
    tmp = None
    work = args.work
    if not work:
        tmp = tempfile.TemporaryDirectory(prefix="graphfuse_backend.")
        work = tmp.name
    os.makedirs(work, exist_ok=True)

    cases, unfed = [], {}
    for suite in SUITES:
        for case_dir in sorted(glob.glob(os.path.join(args.data, suite, "*"))):
            name = f"{suite}/{os.path.basename(case_dir)}"
            if args.filter and args.filter not in name:
                continue
            entry, why = prepare(case_dir, name, work)
            if entry:
                cases.append(entry)
            else:
                unfed[name] = why
    manifest_path = os.path.join(work, "manifest.json")
    with open(manifest_path, "w") as f:
        json.dump({"cases": cases}, f)

    gf = run_graphfuse(args.graphfuse, manifest_path, len(cases), rules)
    ort_out = os.path.join(work, "ort.json")
    p = subprocess.run(["node", ort_js, manifest_path, ort_out], cwd=os.path.join(HERE, "..", "ort"))
    if p.returncode != 0:
        print("error: tests/backend/ort_cases.js failed")
        return 1
    with open(ort_out) as f:
        ort = json.load(f)

    # One verdict string per case and check, compared with the expected ones.
    verdict = {}
    for name, why in unfed.items():
        verdict[name] = {"ort": "unfed"}
    for i, c in enumerate(cases):
        name = c["name"]
        o = ort[name]
        g = gf.get(i, {"crash": "no result"})
        v = {"ort": o["original"]["status"]}
        if "crash" in g:
            v["a"] = v["b"] = v["c"] = "crash"
        else:
            def judged(step, key):
                if g[step]["status"] != "ok":
                    return "gf-error"
                return o[key]["status"]
            v["a"] = judged("a", "applied")
            v["b"] = judged("b", "folded")
            if g["b"]["status"] == "ok":
                v["folded"] = "complete" if g["b"]["left"] == 0 else "partial"
            v["c"] = g["c"]["status"]
        verdict[name] = v
        c["result"] = {"graphfuse": g, "ort": o, "verdict": v}

    base = [n for n, v in verdict.items() if v["ort"] == "pass"]
    def count(key, val, among=base):
        return sum(1 for n in among if verdict[n].get(key) == val)
    print(f"cases: {len(verdict)}; fed to the runners: {len(cases)}; ONNX Runtime passes {len(base)}")
    print(f"(a) apply, ONNX Runtime:        {count('a', 'pass')} of {len(base)} pass")
    print(f"(b) frozen, --fold all, ORT:    {count('b', 'pass')} of {len(base)} pass; "
          f"folded completely {count('folded', 'complete')}")
    c_claimed = [n for n in verdict if verdict[n].get("c") not in (None, "unsupported", "crash")]
    print(f"(c) reference executor:         {count('c', 'pass', verdict)} pass, "
          f"{count('c', 'mismatch', verdict)} mismatch, {count('c', 'error', verdict)} error, "
          f"{count('c', 'unsupported', verdict)} without a kernel for an op ({len(c_claimed)} claimed)")

    if args.results:
        with open(args.results, "w") as f:
            json.dump({"cases": cases, "unfed": unfed}, f, indent=1)

    lines = {}
    for n in sorted(verdict):
        v = verdict[n]
        lines[n] = " ".join(f"{k}={v[k]}" for k in ("ort", "a", "b", "folded", "c") if k in v)
    if args.write_expected:
        with open(args.expected, "w") as f:
            f.write("# tests/backend/backend_suite.py --write-expected: one line per ONNX backend test case\n")
            f.write("# (libonnx-testdata 1.12), ort = ONNX Runtime on the original, a/b/c as in the script.\n")
            for n, l in lines.items():
                f.write(f"{n} {l}\n")
        print(f"wrote {args.expected}")
        return 0
    expected = {}
    if os.path.exists(args.expected):
        with open(args.expected) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                n, rest = line.rstrip("\n").split(" ", 1)
                expected[n] = rest
    # Only a change for the worse fails: kernels other work adds turn 'unsupported' into
    # 'pass' and 'partial' into 'complete', which is reported (IMPROVED: rerun with
    # --write-expected) but must not turn the suite red.
    status = 0
    improved = 0
    for n, l in lines.items():
        if n not in expected:
            if args.filter is None:
                print(f"NEW {n}: {l} (rerun with --write-expected)")
            continue
        if expected[n] == l:
            continue
        old = dict(kv.split("=", 1) for kv in expected[n].split())
        worse = worse_than(old, verdict[n])
        if worse:
            print(f"WORSE {n}: {worse}: expected '{expected[n]}', got '{l}'")
            status = 1
        else:
            improved += 1
            print(f"IMPROVED {n}: expected '{expected[n]}', got '{l}'")
    # What must never happen, whatever expected.txt says: a case ONNX Runtime passes breaks,
    # or the reference kernels compute a wrong result.
    for n in base:
        v = verdict[n]
        for k in ("a", "b"):
            if v.get(k) != "pass":
                print(f"BROKEN ({k}) {n}: {v.get(k)}")
                status = 1
    for n, v in verdict.items():
        if v.get("c") in ("mismatch", "crash") and expected.get(n, "").find("c=" + v["c"]) < 0:
            print(f"WRONG (c) {n}: {v['c']}")
            status = 1
    if improved:
        print(f"{improved} cases better than tests/backend/expected.txt (rerun with --write-expected)")
    print("backend suite: " + ("no case worse than expected" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
