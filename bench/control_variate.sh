#!/usr/bin/env bash
# LRU as a control variate for a miniature simulation, measured from the outside (it is not an
# option of cdnlab): for each trace, policy, estimator, rate and sample seed, the policy's
# miniature curve less LRU's miniature error on the same sample at the same size (LRU's
# miniature by `--replay`, less its exact curve from one pass). Prints the mean absolute error
# against the full replays with and without the control, and the full replays' time over the
# estimate's (with the control: the policy's miniature, LRU's and LRU's exact pass, run one
# after another). No libCacheSim needed. See docs/traces.md.
#
#   bench/control_variate.sh                     # the small traces, R = 0.1 and 0.25
#   BIG=1 ONLY=10^7 RATES=0.1 bench/control_variate.sh
#   POLICIES=fifo ESTIMATORS=strata SEEDS=5 bench/control_variate.sh
#
# Writes bench/results/control_variate.csv and prints a table.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
agreement_traces
exec python3 "$here/control_variate.py" "$cdnlab" "$unit" "$sized" \
  "${REAL:-$root/../shared/traces}" "$big"
