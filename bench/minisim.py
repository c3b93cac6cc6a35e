"""Miniature simulation against full replays and libCacheSim; see minisim.sh."""
import os
import sys
import time

import libcachesim as lcs
from libcachesim import libcachesim_python as native

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402
from lcs_policies import POLICIES, reader as lcs_reader  # noqa: E402

cdnlab, unit, sized, real, big = sys.argv[1:6]
RATES = [float(r) for r in os.environ.get("RATES", "0.1,0.25").split(",")]
WANT = os.environ.get("POLICIES", "lru,fifo,s3fifo,sieve,arc").split(",")
# libCacheSim's spatial sampler keeps hash % (1/R) == 0: rates whose inverse is whole.
traces = curves.traces(unit, sized, real, big)


def run(*args):
    return curves.run(cdnlab, *args)


def sizes_for(trace, unit, rate):
    return curves.sizes_for(cdnlab, trace, unit, rate)


def libcachesim_minisim(policy, trace, unit, sizes, rate):
    """libCacheSim's miniature at each size: its spatial sampler, the cache scaled by R."""
    t = time.perf_counter()
    out = []
    for c in sizes:
        sampler = native.Sampler(rate, native.SamplerType.SPATIAL_SAMPLER)
        reader = lcs_reader(trace, unit, sampler)
        mr, bmr = getattr(lcs, POLICIES[policy])(max(1, round(c * rate))).process_trace(reader)
        out.append(mr)
    return out, time.perf_counter() - t


def libcachesim_lru_bytes(trace, sizes):
    t = time.perf_counter()
    out = []
    for c in sizes:
        out.append(lcs.LRU(c).process_trace(lcs_reader(trace, "bytes"))[1])
    return out, time.perf_counter() - t


rows = []
hdr = (f"{'trace':<15} {'unit':<7} {'policy':<7} {'rate':>5} {'MAE':>7} {'max':>7} "
       f"{'mini s':>7} {'full s':>7} {'full/mini':>9} {'lcs mini s':>10} {'lcs/mini':>8} "
       f"{'lcs MAE':>8}")
print(hdr)
for name, trace, unit in traces:
    for rate in RATES:
        sizes = sizes_for(trace, unit, rate)
        joined = ",".join(map(str, sizes))
        for policy in WANT:
            args = ["mrc", "--trace", trace, "--policy", policy, "--replay", "--sizes", joined,
                    "--size-unit", unit, "--sample", str(rate), "--exact-too", "--json",
                    "--no-plot"]
            got = run(*args)
            mini = [r["miss_ratio"] for r in got]
            full = [r["exact_miss_ratio"] for r in got]
            gaps = [abs(a - b) for a, b in zip(mini, full)]
            lcs_mini, lcs_s = libcachesim_minisim(policy, trace, unit, sizes, rate)
            lcs_gaps = [abs(a - b) for a, b in zip(lcs_mini, full)]
            row = dict(trace=name, unit=unit, policy=policy, rate=rate, sizes=len(sizes),
                       mae=sum(gaps) / len(gaps), max_error=max(gaps),
                       mini_s=got[0]["seconds"], full_s=got[0]["exact_seconds"],
                       lcs_mini_s=lcs_s, lcs_mae=sum(lcs_gaps) / len(lcs_gaps))
            if policy == "lru" and unit == "objects":
                # LRU's exact curve (stack distances) is the check of the full replays.
                exact = [r["miss_ratio"] for r in run("mrc", "--trace", trace, "--sizes", joined,
                                                      "--json", "--no-plot")]
                assert all(abs(a - b) < 1e-12 for a, b in zip(exact, full)), (exact, full)
            rows.append(row)
            print(f"{name:<15} {unit:<7} {policy:<7} {rate:>5} {row['mae']:>7.4f} "
                  f"{row['max_error']:>7.4f} {row['mini_s']:>7.3f} {row['full_s']:>7.3f} "
                  f"{row['full_s'] / row['mini_s']:>9.1f} {lcs_s:>10.3f} "
                  f"{lcs_s / row['mini_s']:>8.1f} {row['lcs_mae']:>8.4f}", flush=True)
    if unit == "bytes":
        # The byte-weighted LRU curve in one pass against libCacheSim's replays in bytes.
        sizes = sizes_for(trace, unit, 1.0)
        t = time.perf_counter()
        curve = run("mrc", "--trace", trace, "--sizes", ",".join(map(str, sizes)), "--size-unit",
                    "bytes", "--json", "--no-plot")
        ours = time.perf_counter() - t
        theirs, lcs_s = libcachesim_lru_bytes(trace, sizes)
        worst = max(abs(a["byte_miss_ratio"] - b) for a, b in zip(curve, theirs))
        print(f"{name:<15} byte-weighted LRU curve at {len(sizes)} sizes: cdnlab mrc {ours:.3f} s "
              f"(whole command), libCacheSim LRU replays {lcs_s:.3f} s: {lcs_s / ours:.1f}x; "
              f"largest byte-miss gap {worst:.2e}", flush=True)
curves.write_results("minisim", rows)
