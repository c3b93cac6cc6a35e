#!/usr/bin/env bash
# The miniature simulation's two estimators side by side (`--estimator adj` and `strata`): for
# each trace, rate and policy, over sample seeds 1 to $SEEDS, the mean absolute error of each
# curve against the full replays and the time of the full replays over the miniature's, both
# from one `cdnlab mrc --exact-too` run. No libCacheSim needed. See docs/traces.md.
#
#   bench/estimators.sh                     # agree.sh's two Zipf 0.9 traces and the real sample
#   BIG=1 bench/estimators.sh               # also the 10^7-request trace of bench/compare.sh
#   RATES=0.1 SEEDS=5 POLICIES=fifo,s3fifo bench/estimators.sh
#   BIG=1 ONLY=10^7 SEEDS=3 bench/estimators.sh   # only the traces whose name has 10^7
#
# Writes bench/results/estimators.csv and prints a table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
agreement_traces
exec python3 "$here/estimators.py" "$cdnlab" "$unit" "$sized" "${REAL:-$root/../shared/traces}" "$big"
