#!/usr/bin/env bash
# Installs onnxruntime-node (the ONNX Runtime judge) into tests/ort/node_modules; idempotent.
# Exit 0: installed (or already there). Exit 2: skipped (no node/npm, or registry unreachable).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The CPU binaries ship inside the npm package; skip the post-install download of GPU
# providers from nuget.org, which an offline or npm-only machine cannot reach.
export ONNXRUNTIME_NODE_INSTALL=skip
exec "$here/../lib/npm_install.sh" "$here" "${GRAPHFUSE_ORT_VERSION:-1.30.0}" onnxruntime-node
