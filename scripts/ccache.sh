# Sourced by the build scripts: when ccache is installed, sets `launcher` to the CMake options
# that compile through it, with paths taken relative to the checkout, so that a fresh clone in
# another folder (CI's) finds what an earlier build of the same sources left in the cache.
# Without ccache, `launcher` is empty and the build is as before.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  # What ccache needs to cache sources compiled with a precompiled header (CMakeLists.txt,
  # STAGEGATE_PCH): without it every such source is a miss. A fresh clone's headers are newer than
  # any cached result, so their times are not compared either: contents are.
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
fi
