#!/usr/bin/env python3
"""Per-policy replay speed of two cdnlab binaries, side by side on one trace.

    python3 bench/policies_ab.py NEW_CDNLAB OLD_CDNLAB [REPEATS]

Generates (once) a Zipf(0.8) trace of 10^5 objects and 5 x 10^6 requests in /tmp, then for
every policy replays it with A (NEW) and B (OLD) in turn, REPEATS times each (default 5), one
thread (pinned to one core with taskset when it is there), at 1% and 10% of the working set;
POLICIES=a,b limits the policies. The figure is the simulation time cache-replay
reports (reading excluded); each policy's line gives the median Mreq/s of A and B, the median
of the pair-by-pair ratios A/B (above 1: A is faster), and checks that both found the same hits.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path


def replay(binary, trace, policy):
    # One core (when taskset is there): no read-ahead thread, and less noise from migrations.
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    out = subprocess.run(
        pin + [binary, "cache-replay", "--trace", trace, "--policy", policy, "--size", "0.01,0.1",
         "--threads", "1", "--json", "--no-plot"],
        check=True, capture_output=True, text=True).stdout
    rows = [json.loads(l) for l in out.splitlines()]
    return sum(r["sim_seconds"] for r in rows), sum(r["requests"] for r in rows), [r["hits"] for r in rows]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    a, b = sys.argv[1], sys.argv[2]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    trace = "/tmp/cdnlab-ab-zipf0.8-1e5-5e6.oracleGeneral"
    if not Path(trace).exists():
        subprocess.run([a, "gen-trace", "--out", trace, "--objects", "100000",
                        "--requests", "5000000", "--alpha", "0.8", "--seed", "1"], check=True)
    policies = [p for p in subprocess.run([a, "cache-replay", "--help"], check=True,
                capture_output=True, text=True).stdout.split("Eviction policies, comma-separated, or `all`:")[1]
                .split("\n\n")[0].split("\n") if p.strip()]
    policies = [p.split()[0] for p in policies if not p.strip().startswith("[")]
    if os.environ.get("POLICIES"):
        policies = os.environ["POLICIES"].split(",")
    print(f"{'policy':<14} {'A Mreq/s':>9} {'B Mreq/s':>9} {'A/B':>6}  (median of {repeats} pairs; same hits)")
    worst = []
    for p in policies:
        ra, rb, ratios = [], [], []
        for _ in range(repeats):
            sa, n, ha = replay(a, trace, p)
            sb, _, hb = replay(b, trace, p)
            if ha != hb:
                sys.exit(f"{p}: hits differ: {ha} vs {hb}")
            ra.append(n / sa / 1e6)
            rb.append(n / sb / 1e6)
            ratios.append(sb / sa)
        r = statistics.median(ratios)
        worst.append((r, p))
        print(f"{p:<14} {statistics.median(ra):>9.2f} {statistics.median(rb):>9.2f} {r:>6.3f}")
    print(f"lowest ratio: {min(worst)[1]} {min(worst)[0]:.3f}; median over policies "
          f"{statistics.median(r for r, _ in worst):.3f}")


if __name__ == "__main__":
    main()
