#!/usr/bin/env bash
# The emulation claims (docs/testbed.md#agreement), as root: every emulation scenario run in the
# testbed and judged against the simulator, then `cdnlab testbed report` writes their verdicts
# into the committed record, scenarios/verdicts-emulation.csv (shown in `reproduce`'s report),
# and each run's summary, tables and figures into bench/results/testbed/<scenario>/. About 15
# minutes. Scenarios named as arguments (without testbed- and .toml) run alone.
#
#   sudo bench/emulation.sh
#   sudo bench/emulation.sh dht
set -euo pipefail
source "$(dirname "$0")/lib.sh"
out="$root/target/bench-emulation"
rm -rf "$out"
mkdir -p "$out"
cd "$root"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(gwtw gwtw-shallow tp-paths tp-distance tp-segments tp-segments-distance tp-admission tp-admission-metros dht)
runs=()
for n in "${names[@]}"; do
  s="testbed-$n"
  [ -f "scenarios/$s.toml" ] || { echo "no scenario scenarios/$s.toml" >&2; exit 2; }
  echo "== $s"
  "$cdnlab" testbed run "scenarios/$s.toml" --out "$out/$s" | tail -n 14
  res="$here/results/testbed/${s#testbed-}"
  rm -rf "$res"
  mkdir -p "$res"
  # Everything but the PNG copies of the figures.
  find "$out/$s" -maxdepth 1 -type f ! -name '*.png' -exec cp {} "$res/" \;
  runs+=("$out/$s")
done
"$cdnlab" testbed report "${runs[@]}" --record scenarios/verdicts-emulation.csv --out "$out/report.md"
