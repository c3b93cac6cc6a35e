#!/usr/bin/env bash
# Agreement with libCacheSim: replays one trace with cdnlab (all policies and sizes in one run)
# and with PyPI libcachesim (each policy libCacheSim also has), prints the miss ratios side by
# side and whether the miss counts are the same.
#
#   bench/agree.sh                       # 2x10^4 objects, 5x10^5 requests, Zipf 0.9
#   SIZES=50,500,5000 bench/agree.sh
#
# Uses bench/.venv (created, with libcachesim, if missing) as bench/compare.sh does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
OBJECTS="${OBJECTS:-20000}"
REQUESTS="${REQUESTS:-500000}"
ALPHA="${ALPHA:-0.9}"
SIZES="${SIZES:-100,1000,5000}"
. "$here/libcachesim-venv.sh"
trace="$here/data/zipf${ALPHA}_${OBJECTS}_${REQUESTS}.oracleGeneral"
if [ ! -f "$trace" ]; then
  "$cdnlab" gen-trace --out "$trace" --objects "$OBJECTS" --requests "$REQUESTS" --alpha "$ALPHA" --seed 7
fi
exec "$here/.venv/bin/python" "$here/agree.py" "$cdnlab" "$trace" "$SIZES"
