#!/usr/bin/env bash
# Installs onnxruntime-node (the ONNX Runtime judge) into tests/ort/node_modules; idempotent.
# Exit 0: installed (or already there). Exit 2: skipped (no node/npm, or registry unreachable).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${GRAPHFUSE_ORT_VERSION:-1.30.0}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node/npm not installed" >&2
  exit 2
fi

# One install at a time: ctest may start ort_roundtrip and ort_fused together, and two npm
# installs into one node_modules corrupt each other (TAR_ENTRY_ERROR, half-unpacked packages).
if command -v flock >/dev/null 2>&1 && [ -z "${GRAPHFUSE_ORT_LOCKED:-}" ]; then
  export GRAPHFUSE_ORT_LOCKED=1
  exec flock "$here/.install.lock" "$0" "$@"
fi

# Already installed at the wanted version: nothing to do (no network needed).
installed="$(cd "$here" && node -e 'try{process.stdout.write(require("onnxruntime-node/package.json").version)}catch(e){}' 2>/dev/null)"
if [ "$installed" = "$version" ] && (cd "$here" && node -e 'require("onnxruntime-node")' >/dev/null 2>&1); then
  exit 0
fi

# Ask the registry first so that an offline machine gets a clear skip, not a long npm error.
if ! (cd "$here" && timeout 60 npm view --fetch-retries=1 --fetch-timeout=15000 "onnxruntime-node@$version" version >/dev/null 2>&1); then
  echo "skipped: npm registry unreachable (onnxruntime-node@$version)" >&2
  exit 2
fi

# A private package.json keeps npm from walking up into the repository.
if [ ! -f "$here/package.json" ]; then
  printf '{\n  "name": "graphfuse-ort-judge",\n  "private": true\n}\n' > "$here/package.json"
fi
# The CPU binaries ship inside the npm package; skip the post-install download of GPU
# providers from nuget.org, which an offline or npm-only machine cannot reach.
if ! (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --no-save "onnxruntime-node@$version" >&2); then
  echo "error: npm install onnxruntime-node@$version failed" >&2
  exit 1
fi
if ! (cd "$here" && node -e 'require("onnxruntime-node")' >/dev/null 2>&1); then
  echo "error: onnxruntime-node installed but does not load" >&2
  exit 1
fi
echo "installed onnxruntime-node@$version in $here/node_modules" >&2
exit 0
