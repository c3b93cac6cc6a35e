"""cdnlab's curves against libCacheSim's mrcProfiler; see mrcprofiler.sh.

For each trace, rate and policy, side by side on the same sizes:
- minisim: `cdnlab mrc --policy P --replay --sample R` against mrcProfiler's MINISIM at R;
- shards (LRU): `cdnlab mrc --sample R` against mrcProfiler's SHARDS at R;
- exact (LRU, once per trace): `cdnlab mrc` (one pass, every size) against mrcProfiler's SHARDS
  at rate 1 (its splay-tree stack distances, no sampling), in objects or in bytes.
Errors are mean |estimate - full replay| of the miss ratio over the sizes, the full replays
being cdnlab's (`cdnlab mrc --policy P --replay`), which mrcProfiler's MINISIM at rate 1 (no
sampling) must equal: the script checks it. Times are whole commands (start, reading, output),
the median of REPEATS alternating runs, in CPU seconds (user + system): mrcProfiler's MINISIM
waits for its workers by sleeping 2 s between checks (`print_progress` in libCacheSim's
simulator), so its wall time is a multiple of 2 s whatever the work. Wall times are in the CSV.
One sample's error depends on which objects fall in it, so each estimate is also run with
sample seeds 1 to SALTS (`cdnlab mrc --sample-seed`; mrcProfiler's SHARDS salt; its MINISIM's
salt is fixed in its code) and the MAE given over them: mean, least, largest. mrcProfiler's
salts are mixed (see `salt`).
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402
from curves import mae  # noqa: E402
from lcs_policies import POLICIES  # noqa: E402

cdnlab, profiler, unit, sized, real, big = sys.argv[1:7]
RATES = [float(r) for r in os.environ.get("RATES", "0.1,0.2").split(",")]
WANT = os.environ.get("POLICIES", "lru,fifo,s3fifo,sieve,arc").split(",")
THREADS = int(os.environ.get("THREADS", "1"))
REPEATS = int(os.environ.get("REPEATS", "3"))
SALTS = int(os.environ.get("SALTS", "10"))
# mrcProfiler prints 6 decimals.
PRINTED = 1e-6 + 1e-9


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd):
    """stdout, (CPU seconds, wall seconds)."""
    t, c = time.perf_counter(), cpu()
    out = subprocess.run(cmd, capture_output=True, text=True)
    secs = (cpu() - c, time.perf_counter() - t)
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr[-2000:]}")
    return out.stdout, secs


def ours(args):
    stdout, secs = timed([cdnlab, *args, "--json", "--no-plot"])
    rows = [json.loads(line) for line in stdout.splitlines()]
    return [r["miss_ratio"] for r in rows], [r["byte_miss_ratio"] for r in rows], secs


def theirs(trace, unit, sizes, algo, kind, params):
    cmd = [profiler, trace, "oracleGeneral", f"--algo={algo}", f"--profiler={kind}",
           f"--profiler-params={params}", "--size=" + ",".join(f"{s}B" for s in sizes)]
    if unit == "objects":
        cmd.append("--ignore-obj-size")
    stdout, secs = timed(cmd)
    lines = stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("cache_size"))
    rows = [l.split("\t") for l in lines[head + 1:] if l.strip()]
    assert [int(r[0].rstrip("B")) for r in rows] == sizes, (rows, sizes)
    return [float(r[1]) for r in rows], [float(r[2]) for r in rows], secs


def side_by_side(run_ours, run_theirs):
    """REPEATS alternating runs of each; the results of the last, the median (CPU, wall) times."""
    a_s, b_s = [], []
    for _ in range(REPEATS):
        a = run_ours()
        b = run_theirs()
        a_s.append(a[2])
        b_s.append(b[2])

    def median(ts):
        return tuple(statistics.median(t[i] for t in ts) for i in range(2))
    return a, b, median(a_s), median(b_s)


def salt(k):
    """mrcProfiler's k-th salt: SplitMix64 of k, in 31 bits (it reads the salt with atoi). Its
    hash takes id XOR salt, so small salts (1, 2, ...) only swap ids within small blocks: the
    hottest ids (0 to 15 in a generated trace) stay among themselves, and the samples of salts
    1 to 10 hold the same number of them. Mixed salts draw unrelated samples."""
    x = (k + 0x9E3779B97F4A7C15) % 2**64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) % 2**64
    return (x ^ (x >> 31)) >> 33


def over_seeds(prefix, maes):
    """The mean, least and largest of the MAEs of several samples, keyed by `prefix`."""
    return {prefix + "mae_mean": statistics.mean(maes), prefix + "mae_min": min(maes),
            prefix + "mae_max": max(maes)}


rows = []
hdr = (f"{'trace':<15} {'unit':<7} {'kind':<7} {'policy':<7} {'rate':>5} {'MAE':>7} "
       f"{'lcs MAE':>7} {'cpu s':>7} {'lcs cpu':>7} {'lcs/ours':>8} {'full s':>7} {'full/s':>6} "
       f"{'MAE over seeds':>24} {'lcs MAE over salts':>24}")
print(hdr, flush=True)


def show(r):
    def spread(who):
        if f"{who}mae_mean" not in r:
            return ""
        return (f"{r[who + 'mae_mean']:.4f} ({r[who + 'mae_min']:.4f}-"
                f"{r[who + 'mae_max']:.4f})")
    salts = f"{spread(''):>24} {spread('lcs_'):>24}"
    print(f"{r['trace']:<15} {r['unit']:<7} {r['kind']:<7} {r['policy']:<7} {r['rate']:>5} "
          f"{r['mae']:>7.4f} {r['lcs_mae']:>7.4f} {r['secs']:>7.3f} {r['lcs_secs']:>7.3f} "
          f"{r['lcs_secs'] / r['secs']:>8.1f} {r['full_secs']:>7.3f} "
          f"{r['full_secs'] / r['secs']:>6.1f} {salts}", flush=True)
    rows.append(r)


def timing(ours_s, theirs_s, full_s):
    """The row's CPU times (shown) and wall times (in the CSV)."""
    return dict(secs=ours_s[0], lcs_secs=theirs_s[0], full_secs=full_s[0], wall_secs=ours_s[1],
                lcs_wall_secs=theirs_s[1], full_wall_secs=full_s[1])


ok = True
for name, trace, u in curves.traces(unit, sized, real, big):
    # The exact LRU curve in one pass, at the widest sizes (those of the smallest rate).
    sizes = curves.sizes_for(cdnlab, trace, u, min(RATES))
    joined = ",".join(map(str, sizes))
    a, b, a_s, b_s = side_by_side(
        lambda: ours(["mrc", "--trace", trace, "--sizes", joined, "--size-unit", u]),
        lambda: theirs(trace, u, sizes, "LRU", "SHARDS", "FIX_RATE,1,42"))
    # The ratio that the capacity's unit weighs: requests in objects, bytes in bytes.
    pick = 0 if u == "objects" else 1
    gap = max(abs(x - y) for x, y in zip(a[pick], b[pick]))
    if gap > PRINTED:
        print(f"  exact LRU curves differ by {gap:.2e}: {a[pick]} against {b[pick]}")
        ok = False
    show(dict(trace=name, unit=u, kind="exact", policy="lru", rate=1.0, sizes=len(sizes),
              mae=0.0, lcs_mae=gap, **timing(a_s, b_s, a_s)))
    for rate in RATES:
        sizes = curves.sizes_for(cdnlab, trace, u, rate)
        joined = ",".join(map(str, sizes))
        common = ["--trace", trace, "--sizes", joined, "--size-unit", u]
        for policy in WANT:
            algo = POLICIES[policy]
            f_ours = lambda: ours(["mrc", *common, "--policy", policy, "--replay",  # noqa: E731
                                   "--threads", str(THREADS)])
            f_theirs = lambda: theirs(trace, u, sizes, algo, "MINISIM",  # noqa: E731
                                      f"FIX_RATE,1,{THREADS}")
            fa, fb, full_s, lcs_full_s = side_by_side(f_ours, f_theirs)
            full = fa[0]
            gap = max(abs(x - y) for x, y in zip(fa[0], fb[0]))
            if gap > PRINTED:
                print(f"  {policy} full replays differ by {gap:.2e}: {fa[0]} against {fb[0]}")
                ok = False
            mini = ["mrc", *common, "--policy", policy, "--replay", "--sample", str(rate),
                    "--threads", str(THREADS)]
            a, b, a_s, b_s = side_by_side(
                lambda: ours(mini),
                lambda: theirs(trace, u, sizes, algo, "MINISIM", f"FIX_RATE,{rate},{THREADS}"))
            seeds = [mae(ours([*mini, "--sample-seed", str(k)])[0], full)
                     for k in range(1, SALTS + 1)]
            show(dict(trace=name, unit=u, kind="minisim", policy=policy, rate=rate,
                      sizes=len(sizes), mae=mae(a[0], full), lcs_mae=mae(b[0], full),
                      **timing(a_s, b_s, full_s), lcs_full_secs=lcs_full_s[0],
                      **over_seeds("", seeds)))
            if policy == "lru":
                a, b, a_s, b_s = side_by_side(
                    lambda: ours(["mrc", *common, "--sample", str(rate)]),
                    lambda: theirs(trace, u, sizes, "LRU", "SHARDS", f"FIX_RATE,{rate},42"))
                theirs_seeds = [mae(theirs(trace, u, sizes, "LRU", "SHARDS",
                                           f"FIX_RATE,{rate},{salt(k)}")[0], full)
                                for k in range(1, SALTS + 1)]
                ours_seeds = [mae(ours(["mrc", *common, "--sample", str(rate), "--sample-seed",
                                        str(k)])[0], full) for k in range(1, SALTS + 1)]
                show(dict(trace=name, unit=u, kind="shards", policy="lru", rate=rate,
                          sizes=len(sizes), mae=mae(a[0], full), lcs_mae=mae(b[0], full),
                          **timing(a_s, b_s, full_s), **over_seeds("", ours_seeds),
                          **over_seeds("lcs_", theirs_seeds)))
print("kind: exact = the LRU curve in one pass (its lcs MAE column: the largest gap to "
      "mrcProfiler's, which must be 0 to its 6 printed decimals); minisim = miniature "
      "simulation; shards = SHARDS (LRU). MAE against the full replays; times are CPU seconds "
      f"of whole commands, medians of {REPEATS} alternating runs, {THREADS} thread(s) on both "
      f"sides; MAE over seeds: `--sample-seed` 1 to {SALTS}; lcs MAE over salts: "
      f"mrcProfiler's SHARDS with {SALTS} mixed salts; "
      "full s = cdnlab's full replays at the same sizes, full/s = how much less time the "
      "estimate takes.")
fields = ["trace", "unit", "kind", "policy", "rate", "sizes", "mae", "lcs_mae", "secs",
          "lcs_secs", "full_secs", "lcs_full_secs", "wall_secs", "lcs_wall_secs",
          "full_wall_secs", "mae_mean", "mae_min", "mae_max", "lcs_mae_mean", "lcs_mae_min",
          "lcs_mae_max"]
curves.write_results("mrcprofiler", rows, fields)
sys.exit(0 if ok else 1)
