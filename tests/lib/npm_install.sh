#!/usr/bin/env bash
# Installs npm packages (a runtime judge: onnxruntime-node, TensorFlow.js) into DIR/node_modules;
# idempotent, and quiet when they are there and load.
# usage: npm_install.sh DIR VERSION PACKAGE...   (each PACKAGE at VERSION)
# Exit 0: installed (or already there). Exit 2: skipped (no node/npm, or registry unreachable).
# Exit 1: the install failed or what it installed does not load.
set -u
dir="${1:?usage: npm_install.sh DIR VERSION PACKAGE...}"
version="${2:?usage: npm_install.sh DIR VERSION PACKAGE...}"
shift 2
packages=("$@")
[ ${#packages[@]} -gt 0 ] || { echo "usage: npm_install.sh DIR VERSION PACKAGE..." >&2; exit 1; }

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node/npm not installed" >&2
  exit 2
fi

# One install into a folder at a time: ctest -j starts several judge tests together, and two npm
# installs into one node_modules corrupt each other (TAR_ENTRY_ERROR, half-unpacked packages).
if command -v flock >/dev/null 2>&1 && [ "${GRAPHFUSE_NPM_LOCKED:-}" != "$dir" ]; then
  export GRAPHFUSE_NPM_LOCKED="$dir"
  exec flock "$dir/.install.lock" "$0" "$dir" "$version" "${packages[@]}"
fi

# Every package at the wanted version and loading: nothing to do (no network needed).
loads() {
  (cd "$dir" && node -e '
    for (const p of process.argv.slice(2)) {
      if (require(p + "/package.json").version !== process.argv[1]) process.exit(1);
      require(p);
    }' "$version" "${packages[@]}") >/dev/null 2>&1
}
loads && exit 0

# Ask the registry first so that an offline machine gets a clear skip, not a long npm error.
if ! (cd "$dir" && timeout 60 npm view --fetch-retries=1 --fetch-timeout=15000 "${packages[0]}@$version" version >/dev/null 2>&1); then
  echo "skipped: npm registry unreachable (${packages[0]}@$version)" >&2
  exit 2
fi
# The folder's package.json (private) keeps npm from walking up into the repository.
specs=()
for p in "${packages[@]}"; do specs+=("$p@$version"); done
if ! (cd "$dir" && npm install --no-audit --no-fund --no-save "${specs[@]}" >&2); then
  echo "error: npm install ${specs[*]} failed" >&2
  exit 1
fi
if ! loads; then
  echo "error: ${packages[*]} installed but does not load" >&2
  exit 1
fi
echo "installed ${specs[*]} in $dir/node_modules" >&2
exit 0
