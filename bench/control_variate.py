"""LRU as a control variate for a miniature simulation, from cdnlab's own outputs; see
control_variate.sh."""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402
from curves import mae  # noqa: E402

cdnlab, unit, sized, real, big = sys.argv[1:6]
RATES = [float(r) for r in os.environ.get("RATES", "0.1,0.25").split(",")]
WANT = os.environ.get("POLICIES", "fifo,s3fifo,sieve,arc").split(",")
ESTIMATORS = os.environ.get("ESTIMATORS", "adj,strata").split(",")
SEEDS = int(os.environ.get("SEEDS", "10"))

rows = []
print(f"{'trace':<15} {'unit':<7} {'policy':<7} {'rate':>5} {'estimator':<9} {'MAE':>7} "
      f"{'with LRU control':>16} {'full/mini':>9} {'with control':>12}")
for name, trace, u in curves.chosen(unit, sized, real, big):
    # The same sizes at every rate (the smallest rate's), so that errors compare.
    sizes = ",".join(map(str, curves.sizes_for(cdnlab, trace, u, min(RATES))))
    mrc = ["mrc", "--trace", trace, "--sizes", sizes, "--size-unit", u, "--json", "--no-plot"]
    exact = curves.run(cdnlab, *mrc)
    lru_exact = [r["miss_ratio"] for r in exact]
    for rate in RATES:
        for policy in WANT:
            for est in ESTIMATORS:
                plain, controlled, t_plain, t_ctl = [], [], [], []
                for seed in range(1, SEEDS + 1):
                    sample = ["--sample", str(rate), "--sample-seed", str(seed), "--estimator",
                              est]
                    got = curves.run(cdnlab, *mrc, "--policy", policy, "--replay", *sample,
                                     "--exact-too")
                    lru = curves.run(cdnlab, *mrc, "--policy", "lru", "--replay", *sample)
                    # Timed apart from the others, as the estimate would pay it.
                    again = curves.run(cdnlab, *mrc)
                    m = [r["miss_ratio"] for r in got]
                    full = [r["exact_miss_ratio"] for r in got]
                    c = [min(1.0, max(0.0, x - (l["miss_ratio"] - e)))
                         for x, l, e in zip(m, lru, lru_exact)]
                    plain.append(mae(m, full))
                    controlled.append(mae(c, full))
                    t_plain.append(got[0]["exact_seconds"] / got[0]["seconds"])
                    t_ctl.append(got[0]["exact_seconds"] / (got[0]["seconds"] + lru[0]["seconds"]
                                                            + again[0]["seconds"]))
                row = dict(trace=name, unit=u, policy=policy, rate=rate, estimator=est,
                           seeds=SEEDS, mean_mae=statistics.mean(plain),
                           mean_mae_controlled=statistics.mean(controlled),
                           median_ratio=statistics.median(t_plain),
                           median_ratio_controlled=statistics.median(t_ctl))
                rows.append(row)
                print(f"{name:<15} {u:<7} {policy:<7} {rate:>5} {est:<9} "
                      f"{row['mean_mae']:>7.4f} {row['mean_mae_controlled']:>16.4f} "
                      f"{row['median_ratio']:>8.1f}x {row['median_ratio_controlled']:>11.1f}x",
                      flush=True)
curves.write_results("control_variate", rows)
