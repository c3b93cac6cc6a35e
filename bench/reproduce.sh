#!/usr/bin/env bash
# `cdnlab reproduce` timed on this machine: runs it (release build, from scratch), keeps its
# per-experiment time table, and refreshes scenarios/expected-seconds.csv (the order in which
# reproduce starts cells; never a result) from the seconds each cell took.
#
#   bench/reproduce.sh                 # paper scale: cdnlab reproduce --full
#   SCALE=quick bench/reproduce.sh     # the quick scale
#   OUT=/scratch/r bench/reproduce.sh  # output folder (default target/bench-reproduce-SCALE)
#   ONLY="gwtw-e2 mh-x3" bench/reproduce.sh   # some experiments only (does not touch the
#                                             # other experiments' expected times)
#
# Writes OUT/times.txt (the table reproduce prints at the end, with the wall clock) and
# OUT/cell-seconds.csv; at paper scale records each claim's verdict in
# scenarios/verdicts-full.csv (shown beside the quick verdicts in the quick report); then
# rebuilds so the next `reproduce` uses the new expected times and verdicts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
SCALE="${SCALE:-full}"
OUT="${OUT:-$root/target/bench-reproduce-$SCALE}"
case "$SCALE" in
  full) flag=--full ;;
  quick) flag=--quick ;;
  *) echo "SCALE=$SCALE: full or quick is allowed" >&2; exit 2 ;;
esac
only=()
for o in ${ONLY:-}; do only+=(--only "$o"); done
(cd "$root" && cargo build --release --quiet -p cdnlab-cli)
rm -rf "$OUT"
mkdir -p "$OUT"
start=$(date +%s)
CDNLAB_PROGRESS_SECS="${CDNLAB_PROGRESS_SECS:-60}" \
  "$root/target/release/cdnlab" reproduce $flag "${only[@]}" --out "$OUT" 2> >(tee "$OUT/log.txt" >&2)
end=$(date +%s)
# The table: from the "experiment" header to the wall-clock line.
sed -n '/^experiment  /,/^wall clock/p' "$OUT/log.txt" > "$OUT/times.txt"
{
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); $(date -u +%Y-%m-%d)"
  echo "command: cdnlab reproduce $flag ${only[*]:-}; $((end - start)) s in all"
} >> "$OUT/times.txt"
cat "$OUT/times.txt"
# Paper scale: this run's verdicts replace the same claims' rows of scenarios/verdicts-full.csv,
# which the quick report shows beside its own verdicts (claims not run keep their old rows).
if [ "$SCALE" = full ]; then
python3 - "$OUT/claims.json" "$root/scenarios/verdicts-full.csv" <<'EOF'
import csv, json, os, sys
doc = json.load(open(sys.argv[1]))
prov = doc["provenance"]
commit, date = prov["commit"][:12], prov["started"][:10]
fresh = {c["id"]: {"claim": c["id"], "pass": str(c["pass"]).lower(), "measured": c["in_words"],
                   "commit": commit, "date": date} for c in doc["claims"]}
table = sys.argv[2]
try:
    with open(table) as f:
        old = [r for r in csv.DictReader(f) if r["claim"] not in fresh]
except FileNotFoundError:
    old = []
rows = sorted(old + list(fresh.values()), key=lambda r: r["claim"])
with open(table + ".tmp", "w", newline="") as f:
    w = csv.DictWriter(f, ["claim", "pass", "measured", "commit", "date"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
os.replace(table + ".tmp", table)
print(f"{table}: {len(fresh)} verdicts recorded, {len(rows)} in all", file=sys.stderr)
EOF
fi
# Expected seconds: this run's cells replace the same (scale, experiment) rows.
python3 - "$root/scenarios/expected-seconds.csv" "$OUT/cell-seconds.csv" <<'EOF'
import csv, sys
table, new = sys.argv[1], sys.argv[2]
with open(new) as f:
    fresh = list(csv.DictReader(f))
replaced = {(r["scale"], r["experiment"]) for r in fresh}
try:
    with open(table) as f:
        old = [r for r in csv.DictReader(f) if (r["scale"], r["experiment"]) not in replaced]
except FileNotFoundError:
    old = []
rows = old + fresh
rows.sort(key=lambda r: (r["scale"], r["experiment"], int(r["cell"])))
with open(table + ".tmp", "w", newline="") as f:
    w = csv.DictWriter(f, ["scale", "experiment", "cell", "seconds"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
import os
os.replace(table + ".tmp", table)
print(f"{table}: {len(fresh)} cells measured, {len(rows)} in all", file=sys.stderr)
EOF
