#!/usr/bin/env python3
"""Prints the errors of every `verify: true` rule-test case: its input is written to a
.graph file and checked with `graphfuse verify` (the rules the test file loads, the case's
`rules:` as --only, no folding, as `graphfuse test` runs it). It prints per case its
file:line and case, the rules that fired, then per output max_abs, max_rel, verdict. `graphfuse test` only says PASS/FAIL.

    tests/verify/case_errors.py GRAPHFUSE tests/rules/verify_tf_conv.yaml [...]
"""
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
    exe, files = sys.argv[1], sys.argv[2:]
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
            cmd = [exe, "verify", "--fold", "off", g.name]
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
