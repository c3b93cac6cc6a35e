#!/usr/bin/env python3
"""Are two reproduce folders the same? For every experiment folder in both, summary.csv and
results.csv are compared byte for byte; where they differ, the differing columns are named, and
the comparison fails unless every one of them records wall time (the TIMED columns below: solver
timings and the ratios between them). The claims' verdicts and measured values are compared too.

    cdnlab reproduce --quick --out /tmp/before      # with the old binary
    cdnlab reproduce --quick --out /tmp/after       # with the new one
    python3 bench/identical.py /tmp/before /tmp/after
"""
import csv
import json
import sys
from pathlib import Path

# Columns that measure wall time, as `name_mean`, `name_sd`, `name_ci95` and per run `name`.
TIMED = {"cold_seconds", "warm_seconds", "reference_seconds", "warm_ratio", "reference_ratio"}
# Claims whose measured values include those timings: their verdicts must agree, their values may not.
TIMED_CLAIMS = {"tp.solver-exact", "tp.solver-faster", "tp.solver-warm"}


def timed(column: str) -> bool:
    for suffix in ("_mean", "_sd", "_ci95", ""):
        if column.endswith(suffix) and column[: len(column) - len(suffix)] in TIMED:
            return True
    return False


def differing_columns(a: Path, b: Path) -> set:
    ra, rb = list(csv.reader(a.open())), list(csv.reader(b.open()))
    if len(ra) != len(rb) or ra[0] != rb[0]:
        return {"<shape or header>"}
    head = ra[0]
    return {head[k] for x, y in zip(ra[1:], rb[1:]) for k, (u, v) in enumerate(zip(x, y)) if u != v}


def main(before: str, after: str) -> int:
    a, b = Path(before), Path(after)
    bad, same, timing = [], 0, []
    for d in sorted(p for p in a.iterdir() if p.is_dir()):
        for name in ("summary.csv", "results.csv"):
            fa, fb = d / name, b / d.name / name
            if not fa.exists():
                continue
            if not fb.exists():
                bad.append(f"{d.name}/{name}: missing in {after}")
            elif fa.read_bytes() == fb.read_bytes():
                same += 1
            else:
                cols = differing_columns(fa, fb)
                (timing if all(timed(c) for c in cols) else bad).append(
                    f"{d.name}/{name}: {', '.join(sorted(cols))}")
    ca = {c["id"]: c for c in json.loads((a / "claims.json").read_text())["claims"]}
    cb = {c["id"]: c for c in json.loads((b / "claims.json").read_text())["claims"]}
    if ca.keys() != cb.keys():
        bad.append(f"claims differ: {sorted(ca.keys() ^ cb.keys())}")
    for k in sorted(ca.keys() & cb.keys()):
        timed_claim = k in TIMED_CLAIMS and ca[k]["pass"] == cb[k]["pass"]
        if not timed_claim and (ca[k]["pass"] != cb[k]["pass"] or ca[k]["measured"] != cb[k]["measured"]):
            bad.append(f"claim {k}: {ca[k]['pass']} {ca[k]['measured']} -> {cb[k]['pass']} {cb[k]['measured']}")
    print(f"{same} files byte-identical")
    for t in timing:
        print(f"differ in wall-time columns only: {t}")
    for x in bad:
        print(f"DIFFERENT: {x}")
    same_claims = not any(x.startswith("claim") for x in bad)
    print(f"{len(ca)} claims: verdicts identical{' and measured values too, but for the timed' if same_claims else ' or NOT'}"
          f" ({', '.join(sorted(TIMED_CLAIMS))})")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
