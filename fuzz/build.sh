#!/usr/bin/env bash
# Configures and builds the fuzz targets (fuzz/CMakeLists.txt) with clang, libFuzzer, ASan and
# UBSan into DIR (default build/fuzz). Exit 77 (ctest: skipped) when there is no clang++ or its
# libFuzzer runtime (Debian: clang-14, libclang-rt-14-dev; scripts/setup installs both).
# Env: GRAPHFUSE_FUZZ_CXX (the compiler), JOBS (parallel jobs, default nproc).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$src/build/fuzz}
cxx=${GRAPHFUSE_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}
if [ -z "$cxx" ]; then
  echo "fuzz: no clang++ (Debian: clang-14 libclang-rt-14-dev, which scripts/setup installs): skipped"
  exit 77
fi
mkdir -p "$dir"
probe=$dir/.probe
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
     "$cxx" -x c++ - -fsanitize=fuzzer,address,undefined -o "$probe" >"$dir/probe.log" 2>&1; then
  echo "fuzz: $cxx cannot link -fsanitize=fuzzer,address,undefined (Debian: libclang-rt-14-dev): skipped"
  cat "$dir/probe.log"
  exit 77
fi
rm -f "$probe"
source "$src/scripts/ccache-launcher.sh" "$src"
# The archiver and linker g++ already brings (binutils), not whatever llvm-ar / ld.lld happen
# to be installed: CMake picks those up for clang when present, and a fresh machine with only
# scripts/setup's packages has none (tests/deps checks every tool the build used).
tools=()
for t in AR:ar RANLIB:ranlib LINKER:ld NM:nm OBJCOPY:objcopy OBJDUMP:objdump READELF:readelf STRIP:strip \
         ADDR2LINE:addr2line CXX_COMPILER_AR:ar CXX_COMPILER_RANLIB:ranlib; do
  tools+=("-DCMAKE_${t%%:*}=$(command -v "${t#*:}")")
done
start=$(date +%s)
if [ ! -f "$dir/Makefile" ]; then
  if ! cmake -S "$src/fuzz" -B "$dir" -DCMAKE_CXX_COMPILER="$cxx" "${ccache_launcher[@]}" "${tools[@]}" >"$dir/configure.log" 2>&1; then
    tail -30 "$dir/configure.log"
    echo "fuzz: configure failed (full log: $dir/configure.log)"
    exit 1
  fi
fi
if ! cmake --build "$dir" -j"${JOBS:-$(nproc 2>/dev/null || echo 2)}" >"$dir/build.log" 2>&1; then
  { grep -E 'error' -A3 "$dir/build.log" || tail -30 "$dir/build.log"; } | head -60
  echo "fuzz: build failed (full log: $dir/build.log)"
  exit 1
fi
grep -i 'warning:' "$dir/build.log" || true
echo "fuzz: targets built in $dir ($(( $(date +%s) - start )) s)"
