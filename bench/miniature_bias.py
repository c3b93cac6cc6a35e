"""A miniature simulation's bias and spread size by size, over sample seeds; see
miniature_bias.sh."""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402

cdnlab, unit, sized, real = sys.argv[1:5]
RATE = float(os.environ.get("RATE", "0.1"))
ESTIMATOR = os.environ.get("ESTIMATOR", "strata")
WANT = os.environ.get("POLICIES", "lru,fifo,s3fifo,sieve,arc").split(",")
SEEDS = int(os.environ.get("SEEDS", "10"))

rows = []
print(f"{ESTIMATOR} at R = {RATE}, sample seeds 1 to {SEEDS}; bias and sd of miniature - full "
      "(miss ratio), by size; 'mini' is the miniature's capacity at rate R, in objects (of the "
      "mean size, in bytes)")
print(f"{'trace':<15} {'unit':<7} {'policy':<7} {'size':>10} {'mini':>7} {'full':>7} "
      f"{'bias':>8} {'sd':>7} {'MAE':>7}")
for name, trace, u in curves.chosen(unit, sized, real):
    sizes = curves.sizes_for(cdnlab, trace, u, RATE)
    objects, nbytes = curves.working_set(cdnlab, trace, u)
    mean = nbytes / objects if u == "bytes" else 1
    common = ["--trace", trace, "--replay", "--sizes", ",".join(map(str, sizes)), "--size-unit",
              u, "--json", "--no-plot"]
    for policy in WANT:
        full = [r["miss_ratio"] for r in curves.run(cdnlab, "mrc", "--policy", policy, *common)]
        gaps = [[] for _ in sizes]
        for seed in range(1, SEEDS + 1):
            got = curves.run(cdnlab, "mrc", "--policy", policy, *common, "--sample", str(RATE),
                             "--sample-seed", str(seed), "--estimator", ESTIMATOR)
            for g, r, f in zip(gaps, got, full):
                g.append(r["miss_ratio"] - f)
        for size, f, g in zip(sizes, full, gaps):
            row = dict(trace=name, unit=u, policy=policy, estimator=ESTIMATOR, rate=RATE,
                       seeds=SEEDS, size=size, miniature=round(size * RATE / mean), full=f,
                       bias=statistics.mean(g), sd=statistics.stdev(g),
                       mae=statistics.mean(abs(x) for x in g))
            rows.append(row)
            print(f"{name:<15} {u:<7} {policy:<7} {size:>10} {row['miniature']:>7} {f:>7.4f} "
                  f"{row['bias']:>+8.4f} {row['sd']:>7.4f} {row['mae']:>7.4f}", flush=True)

# Per curve: the MAE, how much of the squared error is bias (sum of bias^2 over sum of bias^2 +
# sd^2, over the sizes), and the bias and sd at the smallest size.
print(f"\n{'trace':<15} {'unit':<7} {'policy':<7} {'MAE':>7} {'bias share':>10} "
      f"{'smallest: mini':>14} {'bias':>8} {'sd':>7}")
curves_seen = {}
for r in rows:
    curves_seen.setdefault((r["trace"], r["unit"], r["policy"]), []).append(r)
for (name, u, policy), rs in curves_seen.items():
    b2 = sum(r["bias"] ** 2 for r in rs)
    s2 = sum(r["sd"] ** 2 for r in rs)
    print(f"{name:<15} {u:<7} {policy:<7} {statistics.mean(r['mae'] for r in rs):>7.4f} "
          f"{b2 / (b2 + s2):>10.2f} {rs[0]['miniature']:>14} {rs[0]['bias']:>+8.4f} "
          f"{rs[0]['sd']:>7.4f}")
curves.write_results("miniature_bias", rows)
