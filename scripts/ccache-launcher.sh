# Sourced by scripts/setup, scripts/sanitize and fuzz/build.sh with the source tree as $1: sets
# ccache_launcher to the configure option that compiles through ccache (scripts/debian-packages
# installs it), or to nothing without it. Paths below the source tree are hashed relative to it
# (CCACHE_BASEDIR) and the build folder is left out of the hash (CCACHE_NOHASHDIR), so a clone
# at another path, such as CI's clean clone, reuses the objects an earlier build compiled. The
# settings live in the launcher itself, so any later `cmake --build` of that folder keeps them.
ccache_launcher=()
if command -v ccache >/dev/null; then
  ccache_launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_BASEDIR=$1;CCACHE_NOHASHDIR=1;ccache")
fi
