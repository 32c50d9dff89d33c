# Sourced by the build scripts: when ccache is installed, sets `launcher` to the CMake options
# that compile through it, with paths taken relative to the checkout, so that a fresh clone in
# another folder (CI's) finds what an earlier build of the same sources left in the cache.
# Without ccache, `launcher` is empty and the build is as before.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
