#!/usr/bin/env bash
# The installed library as another project sees it: `cmake --install` into a temporary prefix,
# examples/embed built against it with find_package(graphfuse CONFIG) and graphfuse::engine
# only, then again with pkg-config, and both programs run.
# usage: embed_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
for f in bin/graphfuse include/graphfuse/rewrite.h include/graphfuse/onnx.h include/graphfuse/version.h \
         include/graphfuse/kernels/executor.h lib/libgraphfuse_engine.a lib/libgraphfuse_onnx.a \
         lib/libgraphfuse_kernels.a lib/cmake/graphfuse/graphfuseConfig.cmake \
         lib/cmake/graphfuse/graphfuseConfigVersion.cmake lib/pkgconfig/graphfuse.pc \
         share/graphfuse/rules/seed.yaml; do
  [ -e "$prefix/$f" ] || { echo "FAIL: install did not create $f"; exit 1; }
done
# Public headers must not include private ones (engine/...): the installed tree has only include/.
if grep -rhoE '#include "(io|match|rules|rewrite|dsl|graph|cli|core)/[^"]*"' "$prefix/include"; then
  echo "FAIL: installed headers include private headers"; exit 1
fi
"$prefix/bin/graphfuse" apply --rules "$prefix/share/graphfuse/rules/seed.yaml" "$src/examples/seed_chain.graph" \
  -o "$tmp/out.graph" -q
grep -q FusedConv2D_BiasAdd_ReLU "$tmp/out.graph" || { echo "FAIL: installed CLI did not fuse"; exit 1; }

# 1. CMake package.
cmake -S "$src/examples/embed" -B "$tmp/embed" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/cfg.log" ||
  { cat "$tmp/cfg.log"; exit 1; }
cmake --build "$tmp/embed" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
out=$("$tmp/embed/circuit" "$src/examples/embed/circuit_rules.yaml" 8)
echo "$out"
# One Not(Or) ("both zero"), one Not(And) (the last output), one double Not (parity).
grep -q '  nand: 1 rewrites' <<<"$out" || { echo "FAIL: expected one nand rewrite"; exit 1; }
grep -q '  nor: 1 rewrites' <<<"$out" || { echo "FAIL: expected one nor rewrite"; exit 1; }
grep -q '  double_not: 1 rewrites' <<<"$out" || { echo "FAIL: expected one double_not rewrite"; exit 1; }
grep -q '<broken>:3:' <<<"$out" || { echo "FAIL: a rule error should name <broken>:3:col"; exit 1; }
# Linked against the engine alone: nothing of ONNX, protobuf or oneDNN may be in it.
if ldd "$tmp/embed/circuit" | grep -E 'onnx|protobuf|dnnl'; then echo "FAIL: engine-only program links ML libraries"; exit 1; fi
if nm -C "$tmp/embed/circuit" | grep -q 'onnx::'; then echo "FAIL: ONNX code linked into an engine-only program"; exit 1; fi

# 2. pkg-config.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[ "$(pkg-config --modversion graphfuse)" = "$(sed -n 's/^project(graphfuse VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
  { echo "FAIL: pkg-config version"; exit 1; }
# shellcheck disable=SC2046
g++ -O1 "$src/examples/embed/circuit.cpp" -o "$tmp/circuit_pc" $(pkg-config --cflags --libs graphfuse)
"$tmp/circuit_pc" "$src/examples/embed/circuit_rules.yaml" 8 | grep -q '  nand: 1 rewrites' ||
  { echo "FAIL: pkg-config build"; exit 1; }
echo "PASS: installed package used through find_package and pkg-config"
