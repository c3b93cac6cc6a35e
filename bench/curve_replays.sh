#!/usr/bin/env bash
# The one-pass LRU curve (`cdnlab mrc`) against libCacheSim's 10 LRU replays, on agree.sh's two
# traces, the real sample (when ../shared/traces has it) and, with BIG=1, compare.sh's 10^7-request
# trace; in objects, and in bytes on the sized traces. Fails if a curve differs.
#
#   bench/curve_replays.sh              # the agreement traces
#   BIG=1 PAIRS=3 bench/curve_replays.sh
#   REAL=/path/to/traces bench/curve_replays.sh   # where cloudPhysicsIO.oracleGeneral.bin is
set -euo pipefail
. "$(dirname "$0")/lib.sh"
venv "$here/.venv" libcachesim "libcachesim==${LIBCACHESIM_VERSION:-0.3.5}"
agreement_traces
exec "$here/.venv/bin/python" "$here/curve_replays.py" "$cdnlab" "$unit" "$sized" \
  "${REAL:-$root/../shared/traces}" "$big"
