"""Python package against the command (replay) and against POT (Transportation Problem); see
python.sh."""
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import cdnlab

cli, trace, n, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

print(f"# replay: {trace}, {repeats} runs each, alternated; wall seconds of the whole call")
print(f"{'policy':7} {'size':>7} {'command s':>10} {'python s':>9} {'python/command':>15}  same hits")
worst = 0.0
for policy in ["lru", "fifo"]:
    for size in [10000, 100000]:
        t_cli, t_py, same = [], [], True
        for _ in range(repeats):
            t = time.perf_counter()
            out = subprocess.run([cli, "cache-replay", "--trace", trace, "--policy", policy, "--size",
                                  str(size), "--json", "--no-plot", "--threads", "1"],
                                 check=True, capture_output=True, text=True).stdout
            t_cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            df = cdnlab.replay(trace, policy, size, threads=1)
            t_py.append(time.perf_counter() - t)
            same = same and int(df["hits"][0]) == json.loads(out)["hits"]
        c, p = statistics.median(t_cli), statistics.median(t_py)
        worst = max(worst, p / c)
        print(f"{policy:7} {size:>7} {c:>10.3f} {p:>9.3f} {p / c:>15.3f}  {same}")
print(f"worst python/command ratio: {worst:.3f} (target at most 1.10)")

import ot  # noqa: E402

print(f"\n# Transportation Problem {n} x {n}: cdnlab.tp_solve against POT ot.emd, same arrays")
rng = np.random.default_rng(1)
supply = rng.integers(1, 1000, n)
demand = rng.multinomial(int(supply.sum()), np.ones(n) / n)
cost = rng.integers(0, 10000, (n, n))
t_cd, t_pot = [], []
for _ in range(3):
    t = time.perf_counter()
    r = cdnlab.tp_solve(supply, demand, cost)
    t_cd.append(time.perf_counter() - t)
    t = time.perf_counter()
    g = ot.emd(supply.astype(np.float64), demand.astype(np.float64), cost.astype(np.float64),
               numItermax=10**8)
    t_pot.append(time.perf_counter() - t)
pot_cost = float(np.sum(g * cost))
print(f"optimum: cdnlab {r.cost}, POT {pot_cost:.1f}, same: {abs(pot_cost - r.cost) < 0.5}")
c, p = statistics.median(t_cd), statistics.median(t_pot)
print(f"time: cdnlab {c:.3f} s (inside the solver {r.seconds:.3f} s), POT {p:.3f} s; cdnlab/POT {c / p:.2f}")
