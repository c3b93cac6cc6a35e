"""The miniature simulation's estimators against full replays, over sample seeds; see
estimators.sh."""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402

cdnlab, unit, sized, real, big = sys.argv[1:6]
RATES = [float(r) for r in os.environ.get("RATES", "0.1,0.15").split(",")]
WANT = os.environ.get("POLICIES", "lru,fifo,s3fifo,sieve,arc").split(",")
SEEDS = int(os.environ.get("SEEDS", "10"))
ESTIMATORS = ["adj", "strata"]

rows = []
print(f"{'trace':<15} {'unit':<7} {'policy':<7} {'rate':>5} {'estimator':<9} {'mean MAE':>8} "
      f"{'least':>7} {'largest':>7} {'full/mini':>9} {'(least-largest)':>16}")
for name, trace, u in curves.chosen(unit, sized, real, big):
    for rate in RATES:
        sizes = ",".join(map(str, curves.sizes_for(cdnlab, trace, u, rate)))
        for policy in WANT:
            for est in ESTIMATORS:
                maes, ratios = [], []
                for seed in range(1, SEEDS + 1):
                    got = curves.run(cdnlab, "mrc", "--trace", trace, "--policy", policy,
                                     "--replay", "--sizes", sizes, "--size-unit", u, "--sample",
                                     str(rate), "--sample-seed", str(seed), "--estimator", est,
                                     "--exact-too", "--json", "--no-plot")
                    gaps = [abs(r["miss_ratio"] - r["exact_miss_ratio"]) for r in got]
                    maes.append(sum(gaps) / len(gaps))
                    ratios.append(got[0]["exact_seconds"] / got[0]["seconds"])
                row = dict(trace=name, unit=u, policy=policy, rate=rate, estimator=est,
                           seeds=SEEDS, mean_mae=statistics.mean(maes), least_mae=min(maes),
                           largest_mae=max(maes), median_ratio=statistics.median(ratios),
                           least_ratio=min(ratios), largest_ratio=max(ratios))
                rows.append(row)
                print(f"{name:<15} {u:<7} {policy:<7} {rate:>5} {est:<9} "
                      f"{row['mean_mae']:>8.4f} {row['least_mae']:>7.4f} "
                      f"{row['largest_mae']:>7.4f} {row['median_ratio']:>8.1f}x "
                      f"{row['least_ratio']:>7.1f}-{row['largest_ratio']:.1f}x", flush=True)
curves.write_results("estimators", rows)
