"""Tables of bench/gwtw_load.sh's runs: per cell, runs with an optimum, runs converged (those
that did not are censored at the horizon, never dropped), the median convergence slot over all
runs (the horizon when half or more did not converge), re-trials per user, and the share of
re-trials made by users whose server was within its capacity, the share of those made while a
user in a trial probed that server, and the share of users in a trial at the end (a livelock
keeps a steady share of them). The last two are means over the runs that did not converge
("stalled"), or "-" when every run converged."""
import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

GRID_KEYS = ["servers", "k", "cache_size", "probe", "retrial", "exclude_rewarm", "load"]


def table(folder: Path):
    rows = list(csv.DictReader(open(folder / "results.csv")))
    varying = [k for k in GRID_KEYS if len({r[k] for r in rows}) > 1]
    fixed = {k: rows[0][k] for k in GRID_KEYS if k not in varying}
    print(f"## {folder.name} ({', '.join(f'{k} {v}' for k, v in fixed.items())})")
    cells = defaultdict(list)
    for r in rows:
        cells[tuple(r[k] for k in varying)].append(r)
    head = varying + ["feasible", "converged", "median slot", "re-trials/user", "within capacity",
                      "probed (stalled)", "in trial at end (stalled)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, runs in cells.items():
        n = len(runs)
        feas = sum(float(r["feasible"]) for r in runs)
        conv = sum(float(r["converged"]) for r in runs)
        median = statistics.median(float(r["convergence_slot"]) for r in runs)
        retr = statistics.mean(float(r["retrials_per_user"]) for r in runs)
        within = [float(r["retrials_within_capacity"]) for r in runs]
        within = [w for w in within if w == w]
        share = f"{statistics.mean(within):.3f}" if within else "n/a"
        stalled = [r for r in runs if float(r["converged"]) != 1.0]

        def stalled_mean(name):
            v = [float(r[name]) for r in stalled if float(r[name]) == float(r[name])]
            return f"{statistics.mean(v):.3f}" if v else "-"

        print("| " + " | ".join(list(key) + [f"{feas:.0f}/{n}", f"{conv:.0f}/{n}",
                                             f"{median:.0f}", f"{retr:.1f}", share,
                                             stalled_mean("retrials_probed"),
                                             stalled_mean("in_trial")]) + " |")
    print()


for folder in sorted(Path(sys.argv[1]).iterdir()):
    if (folder / "results.csv").exists():
        table(folder)
