#!/usr/bin/env bash
# Side-by-side benchmark: cdnlab's policies against libCacheSim's on one trace.
#
#   bench/compare.sh            # LRU and FIFO; 10^6 objects, 10^7 requests, Zipf 0.8, sizes 10^4, 10^5
#   POLICIES=all MRC=1 REPEATS=1 bench/compare.sh   # every shared policy, and the 10-size LRU curve
#   POLICIES=none MRC=1 bench/compare.sh             # the 10-size LRU curve only
#   POLICIES=none MRC=1 MRC_PAIRS=5 bench/compare.sh # the curve in 5 alternating pairs (default 3)
#   REQUESTS=1000000 bench/compare.sh   # smaller, for a quick check
#   ADMISSION=second-hit bench/compare.sh   # also: what an admission policy adds to each replay
#   TTL=100000 bench/compare.sh             # also: what expiring objects add to each replay
#   POLICIES=lru,fifo ADMISSION=bloom TTL=100000 PAIRS=15 bench/compare.sh   # more alternating pairs
#
# Creates its own Python virtual environment (bench/.venv) with PyPI libcachesim, generates the
# trace with `cdnlab gen-trace` (unit sizes, oracleGeneral), replays it with both, prints both miss
# ratios and the throughput ratios, and fails if any miss count differs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
venv "$here/.venv" libcachesim "libcachesim==${LIBCACHESIM_VERSION:-0.3.5}"
OBJECTS="${OBJECTS:-1000000}"
REQUESTS="${REQUESTS:-10000000}"
ALPHA="${ALPHA:-0.8}"
SIZES="${SIZES:-10000 100000}"
trace="$here/data/zipf${ALPHA}_${OBJECTS}_${REQUESTS}.oracleGeneral"
if [ ! -f "$trace" ]; then
  "$cdnlab" gen-trace --out "$trace" --objects "$OBJECTS" --requests "$REQUESTS" --alpha "$ALPHA" --seed 1
fi
exec "$here/.venv/bin/python" "$here/compare.py" "$cdnlab" "$trace" $SIZES
