"""PEP 517 build backend for `pip install .`: runs the CMake build of the Python module
(target graphfuse_python) and packs build/python/graphfuse into a wheel.

The build folder is $GRAPHFUSE_BUILD_DIR when set (an existing build is reused: only what
changed is rebuilt), else build-pip/ in the source tree. $GRAPHFUSE_CMAKE_ARGS adds
configure options (split on spaces)."""
import base64
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import zipfile

SRC = pathlib.Path(__file__).resolve().parents[2]


def _version():
    text = (SRC / "pyproject.toml").read_text()
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def _tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{plat}"


def _build():
    build = pathlib.Path(os.environ.get("GRAPHFUSE_BUILD_DIR") or SRC / "build-pip")
    if not (build / "CMakeCache.txt").exists():
        args = ["cmake", "-S", str(SRC), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython_EXECUTABLE={sys.executable}"]
        args += os.environ.get("GRAPHFUSE_CMAKE_ARGS", "").split()
        subprocess.run(args, check=True, stdout=sys.stderr)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", "graphfuse_python"], check=True,
                   stdout=sys.stderr)
    pkg = build / "python" / "graphfuse"
    if not any(pkg.glob("_graphfuse*.so")):
        raise RuntimeError(f"the CMake build made no Python module in {pkg}")
    return pkg


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    pkg = _build()
    version, tag = _version(), _tag()
    dist = f"graphfuse-{version}.dist-info"
    files = {}
    for p in sorted(pkg.iterdir()):
        if p.suffix in (".py", ".so"):
            files[f"graphfuse/{p.name}"] = p.read_bytes()
    files[f"{dist}/METADATA"] = (f"Metadata-Version: 2.1\nName: graphfuse\nVersion: {version}\n"
                                 "Summary: Declarative graph rewriting for ML computation graphs\n").encode()
    files[f"{dist}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: graphfuse_backend\nRoot-Is-Purelib: false\n"
                              f"Tag: {tag}\n").encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"graphfuse-{version}-{tag}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(n, d)
    return name


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("graphfuse has no sdist: install from the source tree (pip install .)")
