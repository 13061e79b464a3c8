#!/usr/bin/env python3
"""Prints the errors of every `verify: true` rule-test case: its input is written to a
.graph file and checked with `graphfuse verify` (the rules the test file loads, the case's
`rules:` as --only, no folding, as `graphfuse test` runs it). It prints per case its
file:line and case, the rules that fired, then per output max_abs, max_rel, verdict
(`graphfuse test` only says PASS or FAIL). --kernels fast runs both graphs on the fast set.

    tests/verify/case_errors.py GRAPHFUSE [--kernels fast] tests/rules/verify_tf_conv.yaml [...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import yaml


def cases(path):
    """(line, case) of each verify case; line numbers from the composed YAML nodes."""
    with open(path) as f:
        text = f.read()
    doc = yaml.safe_load(text)
    tests = next(v for k, v in yaml.compose(text).value if k.value == "tests")
    for item, case in zip(tests.value, doc["tests"]):
        if case.get("verify"):
            yield item.start_mark.line + 1, case


def main():
    ap = argparse.ArgumentParser(description="errors of the verify: true rule-test cases")
    ap.add_argument("graphfuse")
    ap.add_argument("--kernels", default="reference", choices=["reference", "fast"])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    exe, files = args.graphfuse, args.files
    status = 0
    for path in files:
        with open(path) as f:
            doc = yaml.safe_load(f)
        base = os.path.dirname(path)
        rules = [os.path.normpath(os.path.join(base, r)) for r in doc.get("load", [])]
        for line, case in cases(path):
            src = case["input"]
            with tempfile.NamedTemporaryFile("w", suffix=".graph", delete=False) as g:
                g.write(src)
            cmd = [exe, "verify", "--fold", "off", "--kernels", args.kernels, g.name]
            for r in rules:
                cmd += ["--rules", r]
            for r in case.get("rules", []):
                cmd += ["--only", r]
            out = subprocess.run(cmd, capture_output=True, text=True)
            os.unlink(g.name)
            if out.returncode != 0:
                status = 1
            rows = [l for l in out.stdout.splitlines() if "max_rel" in l or l.startswith("rules applied")]
            print(f"{path}:{line} {case['name']}")
            for row in rows or [(out.stdout + out.stderr).strip()]:
                print(f"    {row.strip()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
