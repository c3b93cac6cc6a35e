#!/usr/bin/env bash
# Agreement with libCacheSim: replays traces with cdnlab (all policies and sizes in one run) and
# with PyPI libcachesim (each policy libCacheSim also has), in objects and in bytes, prints the
# miss ratios and byte miss ratios side by side and whether the miss counts and missed bytes are
# the same. Also replays a twr trace it writes, and the real sample in ../shared/traces
# (oracleGeneral and vscsi) when it is there; then admission policies (agree_admission.py).
# Exits 1 if a policy that
# should match (see EXACT in agree.py) differs.
#
#   bench/agree.sh                       # Zipf 0.9 traces: unit sizes, and sizes 1..4096 bytes
#   SIZES=50,500,5000 bench/agree.sh     # object capacities (byte capacities are these x 500)
#
# Uses bench/.venv (created, with libcachesim $LIBCACHESIM_VERSION (default 0.3.5), if
# missing) as bench/compare.sh does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
venv "$here/.venv" libcachesim "libcachesim==${LIBCACHESIM_VERSION:-0.3.5}"
SIZES="${SIZES:-100,1000,5000}"
agreement_traces
# The real sample's folder, where the project keeps it (outside the checkout; REAL= to change).
REAL="${REAL:-$root/../shared/traces}"
rc=0
"$here/.venv/bin/python" "$here/agree.py" "$cdnlab" "$unit" "$sized" "$SIZES" "$REAL" \
  "$here/data/synthetic_200000.twr" || rc=1
# Admission policies against libCacheSim's admissioners (libCacheSim logs a line per cache).
"$here/.venv/bin/python" "$here/agree_admission.py" "$cdnlab" "$sized" "$REAL" 2> >(grep -v "INFO\|WARN" >&2) || rc=1
exit $rc
