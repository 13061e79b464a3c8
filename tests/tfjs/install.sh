#!/usr/bin/env bash
# Installs TensorFlow.js (core, converter, cpu and wasm backends; the TF.js judge) into
# tests/tfjs/node_modules; idempotent. The wasm binaries ship inside the npm package.
# Exit 0: installed (or already there). Exit 2: skipped (no node/npm, or registry unreachable).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${GRAPHFUSE_TFJS_VERSION:-4.22.0}"
packages=(tfjs-core tfjs-converter tfjs-backend-cpu tfjs-backend-wasm)

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node/npm not installed" >&2
  exit 2
fi

# One install at a time (ctest -j may start several TF.js tests together).
if command -v flock >/dev/null 2>&1 && [ -z "${GRAPHFUSE_TFJS_LOCKED:-}" ]; then
  export GRAPHFUSE_TFJS_LOCKED=1
  exec flock "$here/.install.lock" "$0" "$@"
fi

loads() {
  (cd "$here" && node -e '
    for (const p of process.argv.slice(2)) {
      if (require("@tensorflow/" + p + "/package.json").version !== process.argv[1]) process.exit(1);
      require("@tensorflow/" + p);
    }' "$version" "${packages[@]}") >/dev/null 2>&1
}
loads && exit 0

if ! (cd "$here" && timeout 60 npm view --fetch-retries=1 --fetch-timeout=15000 "@tensorflow/tfjs-core@$version" version >/dev/null 2>&1); then
  echo "skipped: npm registry unreachable (@tensorflow/tfjs-core@$version)" >&2
  exit 2
fi
specs=()
for p in "${packages[@]}"; do specs+=("@tensorflow/$p@$version"); done
if ! (cd "$here" && npm install --no-audit --no-fund --no-save "${specs[@]}" >&2); then
  echo "error: npm install ${specs[*]} failed" >&2
  exit 1
fi
if ! loads; then
  echo "error: TensorFlow.js installed but does not load" >&2
  exit 1
fi
echo "installed TensorFlow.js $version in $here/node_modules" >&2
exit 0
