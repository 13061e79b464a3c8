#!/bin/sh
# ctest python_pip_install: `pip install .` into a fresh virtualenv (Debian's python3 with its
# system packages, offline, no build isolation) reusing the existing build (GRAPHFUSE_BUILD_DIR),
# then the installed module optimizes a model. usage: pip_install_test.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1 build=$2
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || { echo "skip: no pip for /usr/bin/python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
GRAPHFUSE_BUILD_DIR=$build "$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index "$src"
cd "$tmp"
"$tmp/venv/bin/python" - "$src" "$tmp/venv" <<'PY'
import os, sys
import graphfuse
src, venv = sys.argv[1:3]
assert os.path.realpath(graphfuse.__file__).startswith(os.path.realpath(venv)), graphfuse.__file__
rules = graphfuse.load_rules(os.path.join(src, "rules", "onnx"))
g = graphfuse.load_graph(os.path.join(src, "examples", "models", "squeezenet1_1.onnx"))
before = len(g)
report = g.rewrite(rules)
assert report.converged and len(g) < before, (before, len(g))
print("installed", graphfuse.__version__, "at", os.path.dirname(graphfuse.__file__), f"{before} -> {len(g)} nodes")
PY
