#!/usr/bin/env bash
# Every wrong model (`cdnlab reproduce --list` names them) run through the reproductions it
# touches, at quick scale, and what each claim said under it recorded in
# scenarios/wrong-models.csv (model, claim, pass, measured, commit, date). Each claim's
# falsifier names the wrong models it must reject; the test
# `every_claim_rejects_its_wrong_models` holds this record to that (docs/claims.md, "Wrong
# models").
#
#   bench/wrong_models.sh                       # every wrong model (about 6 minutes on 2 cores)
#   WRONG="gwtw-uniform tp-nearest" bench/wrong_models.sh   # some (their rows are replaced,
#                                                           # the others' kept)
#   OUT=/scratch/w bench/wrong_models.sh        # output folder (default target/bench-wrong)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
OUT="${OUT:-$root/target/bench-wrong}"
(cd "$root" && cargo build --release --quiet -p cdnlab-cli)
bin="$root/target/release/cdnlab"
models="${WRONG:-$("$bin" reproduce --list | sed -n '/^wrong models/,$p' | tail -n +2 | awk '{print $1}')}"
mkdir -p "$OUT"
start=$(date +%s)
done_dirs=()
for m in $models; do
  echo "== wrong model $m" >&2
  rm -rf "${OUT:?}/$m"
  CDNLAB_PROGRESS_SECS="${CDNLAB_PROGRESS_SECS:-60}" \
    "$bin" reproduce --wrong "$m" --out "$OUT/$m" 2> "$OUT/$m.log" || {
      echo "wrong model $m: reproduce failed (see $OUT/$m.log)" >&2; exit 1; }
  tail -n 1 "$OUT/$m.log" >&2
  done_dirs+=("$OUT/$m")
done
end=$(date +%s)
echo "$((end - start)) s for ${#done_dirs[@]} wrong models" >&2
python3 - "$root/scenarios/wrong-models.csv" "${done_dirs[@]}" <<'EOF'
import csv, json, os, sys
table, dirs = sys.argv[1], sys.argv[2:]
fresh = []
for d in dirs:
    doc = json.load(open(os.path.join(d, "claims.json")))
    prov = doc["provenance"]
    model = os.path.basename(d)
    for c in doc["claims"]:
        fresh.append({"model": model, "claim": c["id"], "pass": str(c["pass"]).lower(),
                      "measured": c["in_words"], "commit": prov["commit"][:12],
                      "date": prov["started"][:10]})
ran = {r["model"] for r in fresh}
try:
    with open(table) as f:
        old = [r for r in csv.DictReader(f) if r["model"] not in ran]
except FileNotFoundError:
    old = []
rows = sorted(old + fresh, key=lambda r: (r["model"], r["claim"]))
with open(table + ".tmp", "w", newline="") as f:
    w = csv.DictWriter(f, ["model", "claim", "pass", "measured", "commit", "date"],
                       lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
os.replace(table + ".tmp", table)
failed = sum(r["pass"] == "false" for r in fresh)
print(f"{table}: {len(fresh)} verdicts of {len(ran)} wrong models recorded ({failed} claims "
      f"fail), {len(rows)} rows in all", file=sys.stderr)
EOF
