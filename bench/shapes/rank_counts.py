#!/usr/bin/python3
"""Values with a known rank in ONNX models as two graphfuse builds import them.

usage: rank_counts.py BASE_GRAPHFUSE NEW_GRAPHFUSE MODEL.onnx...

Counts the outputs of every node but constants and graph inputs in the .graph text each
build writes for the model (`graphfuse convert`), and how many of them have a rank
(docs/shapes.md), and how many have every dim known (a number or a symbolic expression).
"""
import os
import re
import subprocess
import sys
import tempfile

# The types after a node's closing `)` or `}`: `: float32[batch, seq], int64[3] as id`.
TYPES = re.compile(r"[)}]: ((?:[A-Za-z0-9_]+(?:\[[^\]]*\])?(?:, )?)+)(?: as .*)?$")
ONE = re.compile(r"([A-Za-z0-9_]+)(\[[^\]]*\])?")


def ranked(binary, model):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.graph")
        subprocess.run([binary, "convert", model, out], check=True, capture_output=True)
        total = known = dims = 0
        for line in open(out, encoding="utf-8"):
            line = line.rstrip()
            if not line or line.startswith(("input ", "output ")) or " = Const(" in line or " = Constant(" in line:
                continue
            if " = " not in line:
                continue
            # One value per output: the names before ` = ` (`a, b = Split(...)`).
            outputs = line.split(" = ", 1)[0].count(", ") + 1
            total += outputs
            m = TYPES.search(line)
            if m:
                for t in ONE.finditer(m.group(1)):
                    if t.group(2):
                        known += 1
                        dims += "?" not in t.group(2)
        return total, known, dims


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    # ranked: the rank is known; all dims: every dim a number or a symbolic expression.
    print(f"{'model':36} {'values':>7} {'ranked before':>14} {'after':>6} {'all dims before':>16} {'after':>6}")
    for model in sys.argv[3:]:
        total, before, dims_before = ranked(sys.argv[1], model)
        _, after, dims_after = ranked(sys.argv[2], model)
        print(f"{os.path.basename(model):36} {total:7} {before:14} {after:6} {dims_before:16} {dims_after:6}")


if __name__ == "__main__":
    main()
