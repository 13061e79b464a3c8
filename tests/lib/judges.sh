# Sourced by the ctest entry points that run a model in a runtime judge (bash).
# require_judge ort|tfjs: installs the judge (tests/ort or tests/tfjs install.sh) or ends the
# test: exit 77 (ctest's skip) where node/npm or the registry is missing, 1 where installing failed.
require_judge() {
  local what
  case "$1" in
    ort) what="ONNX Runtime (onnxruntime-node)" ;;
    tfjs) what="TensorFlow.js" ;;
    *) echo "error: require_judge: unknown judge '$1'"; exit 1 ;;
  esac
  "$(dirname "${BASH_SOURCE[0]}")/../$1/install.sh"
  case $? in
    0) ;;
    2) echo "skipped: $what is unavailable"; exit 77 ;;
    *) echo "error: installing $what failed"; exit 1 ;;
  esac
}

# make_workdir NAME: sets $work to a fresh folder under $TMPDIR, removed when the test exits.
make_workdir() {
  work="$(mktemp -d "${TMPDIR:-/tmp}/graphfuse_$1.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
}

# require_python_onnx: sets $py to Debian's python3 and ends the test with 77 (skipped) unless
# it imports onnx and numpy (python3-onnx, python3-numpy).
require_python_onnx() {
  py=/usr/bin/python3
  if ! [ -x "$py" ] || ! "$py" -c 'import onnx, numpy' >/dev/null 2>&1; then
    echo "skipped: $py with onnx and numpy (python3-onnx, python3-numpy) is unavailable"
    exit 77
  fi
}
