#!/usr/bin/python3
"""Values with a known rank in ONNX models as two graphfuse builds import them.

usage: rank_counts.py BASE_GRAPHFUSE NEW_GRAPHFUSE MODEL.onnx...

Counts the outputs of every node but constants and graph inputs in the .graph text each
build writes for the model (`graphfuse convert`), and how many of them have a rank
(docs/shapes.md). Prints one line per model: values, ranked before, ranked after.
"""
import os
import re
import subprocess
import sys
import tempfile

TYPE = re.compile(r"[)}]: ([A-Za-z0-9_]+)(\[[^\]]*\])?(?: as .*)?$")


def ranked(binary, model):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.graph")
        subprocess.run([binary, "convert", model, out], check=True, capture_output=True)
        total = known = 0
        for line in open(out, encoding="utf-8"):
            line = line.rstrip()
            if not line or line.startswith(("input ", "output ")) or " = Const(" in line or " = Constant(" in line:
                continue
            if " = " not in line:
                continue
            total += 1
            m = TYPE.search(line)
            if m and m.group(2):
                known += 1
        return total, known


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    print(f"{'model':40} {'values':>7} {'before':>7} {'after':>7}")
    for model in sys.argv[3:]:
        total, before = ranked(sys.argv[1], model)
        _, after = ranked(sys.argv[2], model)
        print(f"{os.path.basename(model):40} {total:7} {before:7} {after:7}")


if __name__ == "__main__":
    main()
