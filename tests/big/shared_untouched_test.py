#!/usr/bin/python3
"""ctest shared_untouched_tensors: every model in ../shared/models through `graphfuse apply
--rules rules/onnx`; each initializer the output still has under its input name must be the
input's TensorProto byte for byte (dims, type, name, raw bytes), and onnx.checker must pass
on the output. Usage: shared_untouched_test.py GRAPHFUSE RULES_DIR MODELS_DIR.
Exit 77 without python3-onnx or without the models folder.
"""
import glob
import os
import subprocess
import sys
import tempfile

try:
    import onnx
except ImportError as e:  # pragma: no cover
    print(f"skip: {e}")
    sys.exit(77)

GF, RULES, MODELS = sys.argv[1:4]
models = sorted(glob.glob(os.path.join(MODELS, "*.onnx")))
if not models:
    print(f"skip: no .onnx files in {MODELS}")
    sys.exit(77)

failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for path in models:
        name = os.path.basename(path)
        out = os.path.join(tmp, name)
        p = subprocess.run([GF, "apply", "--rules", RULES, path, "-o", out], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {name}: graphfuse apply exited {p.returncode}\n{p.stdout}{p.stderr}")
            failures += 1
            continue
        before = {t.name: t.SerializeToString() for t in onnx.load(path).graph.initializer}
        result = onnx.load(out)
        after = {t.name: t.SerializeToString() for t in result.graph.initializer}
        kept = [n for n in before if n in after]
        changed = [n for n in kept if before[n] != after[n]]
        try:
            onnx.checker.check_model(result)
        except onnx.checker.ValidationError as e:
            print(f"FAIL {name}: onnx.checker: {e}")
            failures += 1
        if changed:
            print(f"FAIL {name}: {len(changed)} kept initializers differ, first {changed[0]}")
            failures += 1
        print(f"{name}: {len(kept)} of {len(before)} initializers kept, {len(changed)} changed, "
              f"{len(after) - len(kept)} new")
sys.exit(1 if failures else 0)
