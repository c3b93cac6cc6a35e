#!/usr/bin/env bash
# GWTW's central claim across load (issue 37, first measurements): where runs with an optimum
# do not converge, with the paper's re-trial rule and with E9's parts, and how that changes
# with n. Runs the scenarios in bench/gwtw-load/ into OUT (default target/bench-gwtw-load) and
# prints one table per scenario (bench/gwtw_load.py); about 90 s on 2 cores.
#
#   bench/gwtw_load.sh
#   OUT=/tmp/load bench/gwtw_load.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
OUT="${OUT:-$root/target/bench-gwtw-load}"
mkdir -p "$OUT"
for s in "$here"/gwtw-load/*.toml; do
  name="$(basename "$s" .toml)"
  "$cdnlab" run "$s" --out "$OUT/$name" --threads 2 >/dev/null
done
exec python3 "$here/gwtw_load.py" "$OUT"
