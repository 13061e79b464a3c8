#!/usr/bin/env bash
# ctest entry point for ort_roundtrip: ONNX Runtime judges graphfuse's ONNX round trip.
# usage: roundtrip_test.sh CONVERT_TOOL [MODELS_DIR]   (exit 77 = skipped)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/../lib/judges.sh"
tool="${1:?usage: roundtrip_test.sh CONVERT_TOOL [MODELS_DIR]}"
models="${2:-$here/../../../shared/models}"

if [ ! -f "$models/manifest.json" ]; then
  echo "skipped: no models ($models/manifest.json not found)"
  exit 77
fi
require_judge ort
make_workdir ort
node "$here/roundtrip_test.js" --models "$models" --work "$work" --convert "$tool" '{in}' '{out}'
