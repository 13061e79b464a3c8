#!/usr/bin/python3
"""The per-op coverage table of docs/kernels.md, generated.

For every ONNX-domain op that a case of ONNX's backend test suite uses (libonnx-testdata,
top-level nodes) or that graphfuse has a reference kernel for, one row:
  opsets     the opset versions of the suite's cases that use it,
  cases      how many of those cases ONNX Runtime passes here (the suite's scope),
  reference  whether graphfuse's reference set has a kernel for it,
  (c)        of those cases, how many the reference executor passes / runs (a run that a
             kernel refuses counts as run, not passed),
  fast       whether the fast set has a kernel of its own (oneDNN or SIMD) for it,
  (b) folds  of those cases, how many `apply --fold all` folds completely with the inputs
             frozen (the op is then folded by its reference kernel).
The verdicts come from tests/backend/expected.txt (what the ctest onnx_backend checks on
every run), the kernels from `graphfuse backend-test --list-kernels`.

usage: coverage_table.py --graphfuse BIN [--write DOC | --check DOC]
  with neither: print the table; --write: replace the block between the coverage markers
  in DOC; --check: exit 1 when DOC's block differs from the generated one (ctest).
Exit 77 (skipped) without the test data or python3-onnx.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/libonnx-testdata/data"
BEGIN = "<!-- coverage table: tests/backend/coverage_table.py --write docs/kernels.md -->"
END = "<!-- end of coverage table -->"


def verdicts():
    cases = {}
    with open(os.path.join(HERE, "expected.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, *fields = line.split()
            cases[name] = dict(field.split("=", 1) for field in fields)
    return cases


def ops_and_opset(onnx, path):
    model = onnx.load(path, load_external_data=False)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    ops = {n.op_type for n in model.graph.node if n.domain in ("", "ai.onnx")}
    return ops, opset


def opset_list(versions):
    return ", ".join(str(v) for v in sorted(versions)) if versions else "-"


def table(graphfuse, onnx):
    out = subprocess.run([graphfuse, "backend-test", "--list-kernels"], check=True, capture_output=True, text=True)
    kernels = {}
    for line in out.stdout.splitlines():
        k = json.loads(line)
        kernels[k["op"]] = k["fast"]
    rows = collections.defaultdict(lambda: {"opsets": set(), "cases": 0, "c_pass": 0, "c_run": 0, "folded": 0})
    for name, v in sorted(verdicts().items()):
        if v.get("ort") != "pass":
            continue
        model = os.path.join(DATA, name, "model.onnx")
        if not os.path.exists(model):
            continue
        ops, opset = ops_and_opset(onnx, model)
        for op in ops:
            r = rows[op]
            r["opsets"].add(opset)
            r["cases"] += 1
            r["c_pass"] += v.get("c") == "pass"
            r["c_run"] += v.get("c") in ("pass", "mismatch", "error")
            r["folded"] += v.get("folded") == "complete"
    # ONNX-domain kernels without a case here (the TF and com.microsoft ops are listed in
    # the Ops section; their names do not collide with ONNX's).
    schema_ops = {s.name for s in onnx.defs.get_all_schemas() if s.domain in ("", "ai.onnx")}
    for op in kernels:
        if op in schema_ops and op not in rows:
            rows[op]  # noqa: B018 (creates the empty row)
    lines = [
        "| op | opsets in the suite | cases | reference | (c) reference run: pass / run | fast | (b) folds completely |",
        "|---|---|---|---|---|---|---|",
    ]
    for op in sorted(rows):
        r = rows[op]
        ref = op in kernels
        c = f"{r['c_pass']} / {r['c_run']}" if ref and r["cases"] else "-"
        lines.append(f"| {op} | {opset_list(r['opsets'])} | {r['cases']} | {'yes' if ref else 'no'} | {c} | "
                     f"{'yes' if kernels.get(op) else 'no'} | {r['folded']} of {r['cases']} |")
    with_kernel = sum(1 for op in rows if op in kernels)
    lines.append("")
    lines.append(f"{len(rows)} ONNX ops; {with_kernel} with a reference kernel, "
                 f"{sum(1 for op in rows if kernels.get(op))} with a fast one.")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphfuse", required=True)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", metavar="DOC")
    mode.add_argument("--check", metavar="DOC")
    args = ap.parse_args()
    if not os.path.isdir(DATA):
        print(f"coverage_table: no {DATA} (Debian package libonnx-testdata): skipped")
        return 77
    try:
        import onnx
    except ImportError:
        print("coverage_table: no python3-onnx: skipped")
        return 77
    generated = table(args.graphfuse, onnx)
    doc = args.write or args.check
    if not doc:
        print(generated)
        return 0
    with open(doc) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print(f"{doc}: no coverage markers ({BEGIN} ... {END})")
        return 1
    head, rest = text.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    if args.check:
        if old.strip() != generated.strip():
            print(f"{doc}: the coverage table is out of date; regenerate it with\n"
                  f"  /usr/bin/python3 tests/backend/coverage_table.py --graphfuse build/graphfuse --write {doc}")
            return 1
        print(f"{doc}: coverage table up to date")
        return 0
    with open(doc, "w") as f:
        f.write(head + BEGIN + "\n\n" + generated + "\n\n" + END + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
