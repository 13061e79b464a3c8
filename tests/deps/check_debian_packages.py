#!/usr/bin/python3
"""Every file the build depends on must come from a Debian package that scripts/setup installs
or that one of those hard-depends on (Depends/PreDepends, recursively, no Recommends).

A file that only a Recommends brought in (the OpenCL files libdnnl-dev's CMake package needs),
or that someone installed by hand, builds here and fails on a fresh machine: this names it.

The files checked:
  - what configure found: absolute paths in build/CMakeCache.txt (and nested builds' caches), and the *.cmake files in every
    package-config folder it names (what find_package read);
  - what the compiler read: every header in the build's depfiles (*.o.d);
  - what the linker read: every absolute path in the link lines (link.txt).
A symlink counts as itself and as its target: libOpenCL.so is the -dev package's link to the
runtime package's library, and the link is what a fresh machine lacks.

usage: check_debian_packages.py BUILD_DIR PACKAGE_LIST [--without PKG]...
  --without PKG  drop PKG from the list first (the self-test: cutting a needed package fails)
Exit 0: every file accounted for; 1: some are not (listed); 77: not a Debian system (skipped).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys


def listed_packages(path, without):
    names = []
    with open(path) as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            if name and name not in without:
                names.append(name)
    return names


def hard_dependency_closure(packages):
    """apt-cache prints each package of the closure at column 0 (virtual ones as <name>)."""
    out = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", *packages],
        check=True, capture_output=True, text=True).stdout
    closure = {line.strip("<>").split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")}
    # Essential packages are on every Debian system (coreutils' uname, which CMake runs).
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential}\n"],
                         check=True, capture_output=True, text=True).stdout
    closure |= {p for p, e in (l.split() for l in out.splitlines() if len(l.split()) == 2) if e == "yes"}
    return closure


def files_of(packages):
    """Every path the allowed packages installed, from dpkg's own lists."""
    files = set()
    for p in packages:
        for name in (f"/var/lib/dpkg/info/{p}.list", *glob.glob(f"/var/lib/dpkg/info/{p}:*.list")):
            if os.path.exists(name):
                with open(name, errors="replace") as f:
                    files.update(line.rstrip("\n") for line in f)
    return files


def build_inputs(build, excluded_roots):
    """(path as found, its target) pairs for everything configure, compiler and linker read."""
    found = set()
    cache_value = re.compile(r"^([A-Za-z0-9_.+-]+):(?:FILEPATH|PATH|STRING|INTERNAL)=(/.*)$")
    # CMake records a dlltool for clang wherever one is installed; only Windows import
    # libraries use it, so a Linux build never runs it.
    unused = {"CMAKE_DLLTOOL"}
    for cache in glob.glob(os.path.join(build, "**", "CMakeCache.txt"), recursive=True):  # nested builds too
        with open(cache, errors="replace") as f:
            for line in f:
                m = cache_value.match(line.rstrip("\n"))
                if m and m.group(1) not in unused:
                    found.update(v for v in m.group(2).split(";") if v.startswith("/"))
    for dep in glob.glob(os.path.join(build, "**", "*.o.d"), recursive=True):
        with open(dep, errors="replace") as f:
            found.update(t for t in f.read().replace("\\\n", " ").split() if t.startswith("/"))
    for link in glob.glob(os.path.join(build, "**", "link.txt"), recursive=True):
        with open(link, errors="replace") as f:
            found.update(t for t in f.read().split() if t.startswith("/"))
    pairs = set()
    for v in found:
        if not os.path.exists(v):
            continue
        real = os.path.realpath(v)
        if any(real == r or real.startswith(r + os.sep) for r in excluded_roots) or real.startswith("/tmp/"):
            continue
        if os.path.isdir(real):
            for cfg in glob.glob(os.path.join(real, "*.cmake")):
                pairs.add((os.path.normpath(cfg), os.path.realpath(cfg)))
        else:
            pairs.add((os.path.normpath(v), real))
    return pairs


def forms(path):
    """The names dpkg may know a file by: with merged /usr, /lib/x and /usr/lib/x are one file."""
    yield path
    if path.startswith("/usr/"):
        yield path[4:]
    else:
        yield "/usr" + path


def owners(paths):
    """{path: package} for the paths some installed package owns, in one dpkg-query call."""
    result = {}
    if not paths:
        return result
    out = subprocess.run(["dpkg-query", "-S", *sorted(paths)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if ": /" in line:
            pkgs, path = line.split(": /", 1)
            result["/" + path] = re.split(r"[:,]", pkgs)[0].strip()
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("package_list")
    ap.add_argument("--without", action="append", default=[])
    args = ap.parse_args()
    if not shutil.which("dpkg-query") or not shutil.which("apt-cache"):
        print("not Debian: skipped")
        return 77
    if not os.path.exists(os.path.join(args.build, "CMakeCache.txt")):
        print(f"{args.build}/CMakeCache.txt: missing (configure first)", file=sys.stderr)
        return 1

    listed = listed_packages(args.package_list, set(args.without))
    allowed = hard_dependency_closure(listed)
    allowed_files = files_of(allowed)
    source = os.path.realpath(os.path.join(os.path.dirname(args.package_list), ".."))
    pairs = build_inputs(args.build, [source, os.path.realpath(args.build)])

    def accounted(p):
        return any(f in allowed_files for f in forms(p))

    suspects = {p for pair in pairs for p in pair if not accounted(p)}
    owner = owners({f for p in suspects for f in forms(p)})
    failures = set()
    for pair in sorted(pairs):
        known = [p for p in dict.fromkeys(pair) if accounted(p) or any(f in owner for f in forms(p))]
        if not known:
            failures.add(f"FAIL {pair[0]}: used by the build, but no Debian package owns it (installed by hand?)")
        for p in known:
            if not accounted(p):
                pkg = next(owner[f] for f in forms(p) if f in owner)
                failures.add(f"FAIL {p}: from package {pkg}, which {os.path.basename(args.package_list)} "
                             "neither lists nor hard-depends on")
    for line in sorted(failures):
        print(line, flush=True)
    print(f"{len(pairs)} files checked against {len(listed)} listed packages "
          f"({len(allowed)} with their hard dependencies and the essential set)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
