#!/usr/bin/env bash
# ctest entry point for ort_roundtrip: ONNX Runtime judges graphfuse's ONNX round trip.
# usage: roundtrip_test.sh CONVERT_TOOL [MODELS_DIR]   (exit 77 = skipped)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tool="${1:?usage: roundtrip_test.sh CONVERT_TOOL [MODELS_DIR]}"
models="${2:-$here/../../../shared/models}"

if [ ! -f "$models/manifest.json" ]; then
  echo "skipped: no models ($models/manifest.json not found)"
  exit 77
fi
"$here/install.sh"
case $? in
  0) ;;
  2) echo "skipped: ONNX Runtime (onnxruntime-node) is unavailable"; exit 77 ;;
  *) echo "error: installing onnxruntime-node failed"; exit 1 ;;
esac
work="$(mktemp -d "${TMPDIR:-/tmp}/graphfuse_ort.XXXXXX")"
trap 'rm -rf "$work"' EXIT
node "$here/roundtrip_test.js" --models "$models" --work "$work" --convert "$tool" '{in}' '{out}'
