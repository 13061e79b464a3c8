#!/usr/bin/env bash
# Every file the configure step found must come from a Debian package that scripts/setup installs
# or that one of those hard-depends on (Depends/PreDepends, recursively, no Recommends).
# A file that only a Recommends brought in (the OpenCL files libdnnl-dev's CMake package needs),
# or that someone installed by hand, builds here and fails on a fresh machine: this test names it.
#
# usage: check_debian_packages.sh BUILD_DIR PACKAGE_LIST [--without PKG]...
#   --without PKG   drop PKG from the list first (the self-test: cutting a needed package fails)
# Exit 0: every file accounted for; 1: some are not (listed); 77: not a Debian system (skipped).
set -euo pipefail
build=$1 list=$2
shift 2
without=()
while [ $# -gt 0 ]; do
  case $1 in --without) without+=("$2"); shift 2 ;; *) echo "unknown argument $1" >&2; exit 2 ;; esac
done
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null || { echo "not Debian: skipped"; exit 77; }
cache=$build/CMakeCache.txt
[ -f "$cache" ] || { echo "$cache: missing (configure first)" >&2; exit 1; }

mapfile -t listed < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
for w in "${without[@]}"; do
  listed=($(printf '%s\n' "${listed[@]}" | grep -vx -- "$w"))
done

# The closure of hard dependencies. apt-cache prints each package of the closure at column 0
# (virtual ones as <name>), its dependencies indented below.
declare -A allowed=()
while read -r p; do allowed[${p%%:*}]=1; done < <(
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${listed[@]}" | grep -v '^ ' | tr -d '<>')

# Files configure found: absolute paths in cache values (FILEPATH/PATH entries and the *_DIR of
# every package config), plus the config files in each *_DIR, which are what find_package read.
# A symlink counts as itself and its target: libOpenCL.so is the -dev package's link to the
# runtime package's library, and the link is what a fresh machine lacks.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
grep -E '^[A-Za-z0-9_.+-]+:(FILEPATH|PATH|STRING|INTERNAL)=/' "$cache" | sed 's/^[^=]*=//' |
  tr ';' '\n' | grep '^/' | sort -u > "$tmp/values"
: > "$tmp/files"
src=$(cd "$(dirname "$list")/.." && pwd -P); bld=$(cd "$build" && pwd -P)
while read -r v; do
  [ -e "$v" ] || continue
  r=$(readlink -f "$v")
  case $r in "$src"/*|"$bld"/*|"$src"|"$bld"|/tmp/*) continue ;; esac
  if [ -d "$r" ]; then
    find "$r" -maxdepth 1 -name '*.cmake' -type f >> "$tmp/files"
  else
    echo "$v $r" >> "$tmp/files"
  fi
done < "$tmp/values"
sort -u -o "$tmp/files" "$tmp/files"

owner_of() {  # the package owning $1, or nothing; with merged /usr dpkg may know it without /usr
  local o
  o=$(dpkg-query -S "$1" 2>/dev/null | head -1 | cut -d: -f1 | cut -d, -f1) || true
  if [ -z "$o" ] && [[ $1 == /usr/* ]]; then
    o=$(dpkg-query -S "${1#/usr}" 2>/dev/null | head -1 | cut -d: -f1 | cut -d, -f1) || true
  fi
  echo "$o"
}

# Essential packages are on every Debian system (coreutils' uname, which CMake runs).
while read -r p e; do [ "$e" = yes ] && allowed[$p]=1; done < <(dpkg-query -W -f='${Package} ${Essential}\n')

fail=0 checked=0
while read -r f r; do
  checked=$((checked + 1))
  owned=0
  for c in "$f" ${r:+"$r"}; do
    o=$(owner_of "$c")
    [ -n "$o" ] || continue
    owned=1
    if [ -z "${allowed[$o]:-}" ]; then
      echo "FAIL $c: from package $o, which $(basename "$list") neither lists nor hard-depends on"
      fail=1
    fi
  done
  if [ $owned = 0 ]; then
    echo "FAIL $f: found by configure, but no Debian package owns it (installed by hand?)"
    fail=1
  fi
done < "$tmp/files"
echo "$checked files checked against ${#listed[@]} listed packages (${#allowed[@]} with their hard dependencies and the essential set)"
exit $fail
