#!/usr/bin/env bash
# cdnlab's curves against libCacheSim's mrcProfiler (its C++ SHARDS and MINISIM profilers) on
# the same traces, sizes and rates, side by side: the exact LRU curve in one pass (objects and
# bytes), SHARDS, and the miniature simulation of other policies; each profiler's mean error
# against the full replays and its time. See docs/traces.md.
#
#   bench/mrcprofiler.sh                    # agree.sh's two Zipf 0.9 traces and the real sample
#   BIG=1 bench/mrcprofiler.sh              # also the 10^7-request trace of bench/compare.sh
#   RATES=0.1,0.2 THREADS=2 REPEATS=5 POLICIES=fifo,s3fifo bench/mrcprofiler.sh
#
# mrcProfiler is not in PyPI libcachesim's wheel; its source is in the sdist (the same version as
# the other bench scripts use, $LIBCACHESIM_VERSION, default 0.3.5). This script downloads the
# sdist from PyPI (checking its sha256) and builds mrcProfiler in bench/.mrcprofiler once. The
# build needs cmake, a C/C++ compiler, glib and zstd: on Debian or Ubuntu,
#   apt-get install cmake pkg-config libglib2.0-dev libzstd-dev
# (installed here when missing and running as root). Writes bench/results/mrcprofiler.csv and
# prints a table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
venv "$here/.venv" libcachesim "libcachesim==${LIBCACHESIM_VERSION:-0.3.5}"
version="${LIBCACHESIM_VERSION:-0.3.5}"
build="$here/.mrcprofiler/$version"
profiler="$build/mrcProfiler"
if [ ! -x "$profiler" ]; then
  need=()
  command -v cmake >/dev/null || need+=(cmake)
  command -v pkg-config >/dev/null || need+=(pkg-config)
  pkg-config --exists glib-2.0 2>/dev/null || need+=(libglib2.0-dev)
  pkg-config --exists libzstd 2>/dev/null || need+=(libzstd-dev)
  if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    else
      echo "mrcprofiler.sh: building mrcProfiler needs ${need[*]}: apt-get install ${need[*]}" >&2
      exit 2
    fi
  fi
  mkdir -p "$build"
  # The sdist's address and sha256 from PyPI's simple index (PEP 503).
  "$here/.venv/bin/python" - "$version" "$build/libcachesim.tar.gz" <<'EOF'
import hashlib, re, sys, urllib.request
version, out = sys.argv[1:3]
index = urllib.request.urlopen("https://pypi.org/simple/libcachesim/", timeout=60).read().decode()
m = re.search(r'href="([^"#]*/libcachesim-%s\.tar\.gz)#sha256=([0-9a-f]{64})"' % re.escape(version),
              index)
if not m:
    sys.exit(f"mrcprofiler.sh: no sdist of libcachesim {version} on PyPI")
data = urllib.request.urlopen(m.group(1), timeout=300).read()
if hashlib.sha256(data).hexdigest() != m.group(2):
    sys.exit("mrcprofiler.sh: the sdist's sha256 does not match PyPI's")
open(out, "wb").write(data)
EOF
  tar -xzf "$build/libcachesim.tar.gz" -C "$build"
  src="$build/libcachesim-$version/src/libCacheSim"
  cmake -S "$src" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTS=OFF >/dev/null
  make -C "$build/cmake" -j"$(nproc)" mrcProfiler >/dev/null
  # MINISIM finds each eviction policy by dlsym("<name>_init") on the program itself; the
  # static link of CMake's target drops those functions (nothing calls them), so link again
  # with the whole library and its symbols exported.
  obj="$build/cmake/libCacheSim/bin/mrcProfiler/CMakeFiles/mrcProfiler.dir"
  c++ -O3 -rdynamic "$obj/main.cpp.o" "$obj/cli_parser.cpp.o" "$obj/__/cli_reader_utils.c.o" \
    -o "$profiler" -Wl,--whole-archive "$build/cmake/liblibCacheSim.a" -Wl,--no-whole-archive \
    -lm -ldl -lpthread $(pkg-config --libs glib-2.0 libzstd)
  rm -rf "$build/cmake" "$build/libcachesim-$version" "$build/libcachesim.tar.gz"
fi
agreement_traces
REAL="${REAL:-$root/../shared/traces}"
exec "$here/.venv/bin/python" "$here/mrcprofiler.py" "$cdnlab" "$profiler" "$unit" "$sized" "$REAL" "$big"
