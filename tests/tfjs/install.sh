#!/usr/bin/env bash
# Installs TensorFlow.js (core, converter, cpu and wasm backends; the TF.js judge) into
# tests/tfjs/node_modules; idempotent. The wasm binaries ship inside the npm package.
# Exit 0: installed (or already there). Exit 2: skipped (no node/npm, or registry unreachable).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../lib/npm_install.sh" "$here" "${GRAPHFUSE_TFJS_VERSION:-4.22.0}" \
  @tensorflow/tfjs-core @tensorflow/tfjs-converter @tensorflow/tfjs-backend-cpu @tensorflow/tfjs-backend-wasm
