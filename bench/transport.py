"""Transportation Problem benchmark (run by bench/transport.sh).

Dense random balanced instances, integer costs 1..1000, supplies and demands 1..100, seeded.
Each instance is solved by cdnlab (`tp solve --json`, its own solve_seconds), by POT's ot.emd
(LEMON's network simplex, timed around the call) and by HiGHS through scipy.optimize.linprog
(timed around the call); the optimal costs must agree. Ratios are cdnlab / other, per instance,
then the median. HiGHS takes minutes at 1000 x 1000, so it runs on the first seed only there.

Discrete-event engine: one `stream` run (S0, R1, rho = 1, 20000 simulated hours), best of 3:
events (arrivals and departures) per second of wall time on one thread.

Warm start: for each instance, 1% of the demands give up to 20 units each to other demands
(totals unchanged); `cdnlab tp solve FIRST --then SECOND` re-solves from the first optimum's
basis, and its time is compared with a cold solve of SECOND (same optimal cost required).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runcell import best_of  # noqa: E402

import numpy as np
import ot
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

cdnlab = sys.argv[1]
sizes = [int(x) for x in sys.argv[2:]] or [100, 300, 1000]
SEEDS = 3


def instance(n, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(1, 101, n)
    d = rng.integers(1, 101, n)
    # Balance by moving the difference onto the demands, keeping them in 1..100 where possible.
    diff = int(s.sum() - d.sum())
    i = 0
    while diff != 0:
        if diff > 0 and d[i % n] < 100:
            d[i % n] += 1
            diff -= 1
        elif diff < 0 and d[i % n] > 1:
            d[i % n] -= 1
            diff += 1
        i += 1
        if i > 100 * n:  # cannot stay in range: let supplies absorb the rest
            s[0] -= diff
            diff = 0
    c = rng.integers(1, 1001, (n, n))
    return s, d, c


def run_cdnlab(path, extra=()):
    out = subprocess.run([cdnlab, "tp", "solve", path, "--json", *extra], check=True,
                         capture_output=True, text=True).stdout
    r = json.loads(out)
    return r["cost"], r["solve_seconds"], r


def run_pot(s, d, c):
    a, b, m = s.astype(np.float64), d.astype(np.float64), c.astype(np.float64)
    t = time.perf_counter()
    g = ot.emd(a, b, m, numItermax=100_000_000)
    dt = time.perf_counter() - t
    return int(round(float((g * m).sum()))), dt


def run_highs(s, d, c):
    n_s, n_d = len(s), len(d)
    rows = np.concatenate([np.repeat(np.arange(n_s), n_d), n_s + np.tile(np.arange(n_d), n_s)])
    cols = np.concatenate([np.arange(n_s * n_d), np.arange(n_s * n_d)])
    a = coo_matrix((np.ones(2 * n_s * n_d), (rows, cols)), shape=(n_s + n_d, n_s * n_d)).tocsr()
    t = time.perf_counter()
    r = linprog(c.ravel().astype(np.float64), A_eq=a, b_eq=np.concatenate([s, d]).astype(np.float64),
                bounds=(0, None), method="highs")
    dt = time.perf_counter() - t
    return int(round(r.fun)), dt


def shifted(d, seed):
    """1% of the demands give up to 20 units each to random other demands."""
    rng = np.random.default_rng(1000 + seed)
    d = d.copy()
    for _ in range(max(1, len(d) // 100)):
        a, b = rng.integers(0, len(d), 2)
        x = int(min(d[a], rng.integers(1, 21)))
        d[a] -= x
        d[b] += x
    return d


def write(path, s, d, c):
    with open(path, "w") as f:
        json.dump({"supply": s.tolist(), "demand": d.tolist(), "cost": c.tolist()}, f)


print(f"{'n x n':>11} {'seed':>4} {'optimal cost':>13} {'cdnlab s':>9} {'POT s':>9} "
      f"{'HiGHS s':>9} {'/POT':>6} {'/HiGHS':>7} {'warm s':>8} {'warm/cold':>9}")
for n in sizes:
    r_pot, r_highs, r_warm = [], [], []
    for seed in range(SEEDS):
        s, d, c = instance(n, seed)
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            write(first, s, d, c)
            write(second, s, shifted(d, seed), c)
            best = min((run_cdnlab(first) for _ in range(3)), key=lambda r: r[1])
            cold2 = min((run_cdnlab(second) for _ in range(3)), key=lambda r: r[1])
            warm = min((run_cdnlab(first, ["--then", second])[2]["then"] for _ in range(3)),
                       key=lambda t: t["solve_seconds"])
        if warm["cost"] != cold2[0]:
            sys.exit(f"warm re-solve cost {warm['cost']} != cold {cold2[0]} at n={n} seed={seed}")
        pot_cost, pot_s = min((run_pot(s, d, c) for _ in range(3)), key=lambda r: r[1])
        if n < 1000 or seed == 0:
            highs_cost, highs_s = run_highs(s, d, c)
        else:
            highs_cost, highs_s = best[0], float("nan")
        if not (best[0] == pot_cost == highs_cost):
            sys.exit(f"cost mismatch at n={n} seed={seed}: cdnlab {best[0]}, POT {pot_cost}, "
                     f"HiGHS {highs_cost}")
        r_pot.append(best[1] / pot_s)
        if highs_s == highs_s:
            r_highs.append(best[1] / highs_s)
        r_warm.append(warm["solve_seconds"] / cold2[1])
        print(f"{n:>5} x {n:<5} {seed:>4} {best[0]:>13} {best[1]:>9.4f} {pot_s:>9.4f} "
              f"{highs_s:>9.4f} {best[1] / pot_s:>6.2f} {best[1] / highs_s:>7.3f} "
              f"{warm['solve_seconds']:>8.4f} {r_warm[-1]:>9.2f}")
    print(f"{n:>5} x {n:<5} median: {np.median(r_pot):.2f} x POT's time, "
          f"{np.median(r_highs):.3f} x HiGHS's; warm re-solve {np.median(r_warm):.2f} x cold")

wall, _, row = best_of(3, cdnlab, "stream", {"hours": 20000.0}, threads=1)
ev = float(row["events_mean"])
print(f"discrete events: {ev:.3g} in {wall:.2f} s on one thread (best of 3) = "
      f"{ev / wall / 1e6:.1f} M events/s")
