#!/usr/bin/env bash
# Miniature simulation against full replays and against libCacheSim: for each trace, policy and
# sampling rate, `cdnlab mrc --policy P --sample R --exact-too` at 10 sizes (from where the
# miniature holds 100 objects to the working set), its mean and largest absolute error against
# the full replays, both times side by side in one run; LRU's miniature also against the exact
# stack-distance curve; libCacheSim's own miniature (its spatial sampler, caches scaled by R) at
# the same sizes, timed; and the byte-weighted LRU curve (one pass) against libCacheSim
# replaying LRU in bytes at the same sizes.
#
#   bench/minisim.sh                 # the agreement traces (bench/agree.sh's) and the real sample
#   BIG=1 bench/minisim.sh           # also the 10^7-request trace of bench/compare.sh
#   RATES=0.05,0.1 POLICIES=lru,s3fifo bench/minisim.sh
#
# Writes bench/results/minisim.csv and prints a table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
venv "$here/.venv" libcachesim "libcachesim==${LIBCACHESIM_VERSION:-0.3.5}"
agreement_traces
REAL="${REAL:-$root/../shared/traces}"
# libCacheSim prints a line per sampler it makes; left out.
"$here/.venv/bin/python" "$here/minisim.py" "$cdnlab" "$unit" "$sized" "$REAL" "$big" |
  grep -v '^spatial sampler'
