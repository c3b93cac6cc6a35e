#!/usr/bin/env bash
# The timings and the side run of docs/transport.md#on-real-networks: the 26 SNDlib networks
# through T1 at quick scale, a week of 5-minute Abilene intervals with re-allocation, and T3's
# day with and without re-allocation at two scales and two windows (a table).
#
#   bench/networks.sh            # into target/bench-networks (about 15 s on 2 cores)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out="$root/target/bench-networks"
rm -rf "$out"
for s in net-sndlib-t1 net-abilene-week net-t3-windows; do
  "$cdnlab" run "$here/$s.toml" --out "$out/$s" 2>&1 | tail -n 1
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
w = next(csv.DictReader(open(f"{out}/net-abilene-week/summary.csv")))
print("abilene week: {} intervals, {} re-allocations, pivots warm {:.1f} cold {:.1f}".format(
    w["intervals_mean"], w["reallocations_mean"], float(w["warm_pivots_mean"]), float(w["cold_pivots_mean"])))
print("network         streams window reallocate  blocking")
for r in csv.DictReader(open(f"{out}/net-t3-windows/summary.csv")):
    print(f"{r['network']:15} {r['streams']:>7} {r['window']:>6} {r['reallocate']:>10}  "
          f"{float(r['blocking_mean']):.4f} ± {float(r['blocking_ci95']):.4f}")
PY
