#!/usr/bin/env bash
# Where a miniature simulation's error lies, size by size: for each trace, policy and size, the
# mean (bias) and standard deviation over sample seeds 1 to $SEEDS of miniature - full replay,
# in miss ratio. A bias that shrinks as the miniature grows is the small cache's own behaviour;
# a spread is which objects the sample drew. No libCacheSim needed. See docs/traces.md.
#
#   bench/miniature_bias.sh                          # strata at R = 0.1 on the small traces
#   ESTIMATOR=adj RATE=0.15 SEEDS=5 bench/miniature_bias.sh
#   POLICIES=fifo ONLY=unit bench/miniature_bias.sh  # only the traces whose name has "unit"
#
# Writes bench/results/miniature_bias.csv and prints a table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
agreement_traces
exec python3 "$here/miniature_bias.py" "$cdnlab" "$unit" "$sized" "${REAL:-$root/../shared/traces}"
