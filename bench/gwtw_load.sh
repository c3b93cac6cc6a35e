#!/usr/bin/env bash
# GWTW's central claim across load (issue 37): where runs with an optimum do not converge, with
# the paper's re-trial rule and with E9's parts, and how that changes with n. Runs a set of
# scenarios into OUT (default target/bench-gwtw-load-SET) and prints one table per scenario
# (bench/gwtw_load.py).
#
#   bench/gwtw_load.sh           # bench/gwtw-load/: rules and n up to 3000, about 3.5 min on 2 cores
#   bench/gwtw_load.sh large     # bench/gwtw-load-large/: n up to 10^5, about 1.5 hours on 2 cores
#                                # (the c = 2, k = 2 cell at lambda / c = 0.85, n = 10^5: 56 min)
#   OUT=/tmp/load bench/gwtw_load.sh
#
# The large set's results and run time are committed in docs/gwtw.md ("C1 across load").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
SET="${1:-}"
case "$SET" in
  "") dir="$here/gwtw-load"; tag=default ;;
  large) dir="$here/gwtw-load-large"; tag=large ;;
  *) echo "bench/gwtw_load.sh: unknown set '$SET' (allowed: none for the default, or large)" >&2; exit 2 ;;
esac
OUT="${OUT:-$root/target/bench-gwtw-load-$tag}"
mkdir -p "$OUT"
start=$(date +%s)
for s in "$dir"/*.toml; do
  name="$(basename "$s" .toml)"
  "$cdnlab" run "$s" --out "$OUT/$name" --threads "${THREADS:-2}" >/dev/null
done
python3 "$here/gwtw_load.py" "$OUT"
echo "$(nproc) cores; $(( $(date +%s) - start )) s of runs; $(date -u +%Y-%m-%d)"
