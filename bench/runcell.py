"""Runs one scenario cell with `cdnlab run` and measures it (shared by the benchmark scripts)."""
import csv
import os
import subprocess
import sys
import tempfile
import time


def run(cdnlab, experiment, params, threads, reps=1):
    """Runs one cell; returns (wall seconds, peak RSS bytes, summary row)."""
    with tempfile.TemporaryDirectory() as d:
        scen = os.path.join(d, "s.toml")
        with open(scen, "w") as f:
            f.write(f'experiment = "{experiment}"\nreplications = {reps}\n[params]\n')
            for k, v in params.items():
                f.write(f"{k} = {v}\n")
        t = time.perf_counter()
        p = subprocess.Popen([cdnlab, "run", scen, "--out", os.path.join(d, "o"),
                              "--threads", str(threads)], stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if status != 0:
            sys.exit(f"cdnlab run failed for {experiment} {params}")
        with open(os.path.join(d, "o", "summary.csv")) as f:
            row = next(csv.DictReader(f))
        return wall, usage.ru_maxrss * 1024, row


def best_of(n, *args, **kwargs):
    """The fastest of n runs: other work on a shared machine only ever slows a run down."""
    return min((run(*args, **kwargs) for _ in range(n)), key=lambda r: r[0])
