"""The one-pass LRU curve against libCacheSim's 10 replays, on every agreement trace; see
curve_replays.sh.

For each trace and unit: `cdnlab mrc --sizes S --size-unit U` (one pass, the whole command:
start, reading, output) against libCacheSim replaying LRU once per size (`process_trace` only:
its reader is opened before the clock starts). The curves must agree to 1e-9. Alternating pairs,
PAIRS of them (default 5); the ratio is taken per pair, and the median reported with the least
and largest. Each timed part starts after `lcs_policies.quiesce()`: without it, glibc merging
the chunks of libCacheSim's last cache added about 40 ms to cdnlab's time on the 10^7-request
trace.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import libcachesim as lcs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import curves  # noqa: E402
import lcs_policies  # noqa: E402

cdnlab, unit, sized, real, big = sys.argv[1:6]
PAIRS = int(os.environ.get("PAIRS", "5"))


def ours(trace, u, sizes):
    lcs_policies.quiesce()
    t = time.perf_counter()
    out = subprocess.run([cdnlab, "mrc", "--trace", trace, "--sizes", ",".join(map(str, sizes)),
                          "--size-unit", u, "--json", "--no-plot"], check=True,
                         capture_output=True, text=True).stdout
    secs = time.perf_counter() - t
    return [json.loads(line)["miss_ratio"] for line in out.splitlines()], secs


def theirs(trace, u, sizes):
    curve, secs = [], 0.0
    for c in sizes:
        reader = lcs_policies.reader(trace, u)
        cache = lcs.LRU(c)
        lcs_policies.quiesce()
        t = time.perf_counter()
        mr, _ = cache.process_trace(reader)
        secs += time.perf_counter() - t
        curve.append(mr)
    return curve, secs


ok = True
print(f"{'trace':14} {'unit':8} {'requests':>9} {'cdnlab mrc':>11} {'lcs 10 replays':>15} "
      f"{'ratio':>7} {'range':>14} curves")
for name, trace, u in curves.traces(unit, sized, real, big or None):
    # The widest sizes mrcprofiler.py uses for this trace's exact curve (rate 0.1's lower end).
    sizes = curves.sizes_for(cdnlab, trace, u, 0.1)
    ratios, a_s, b_s, same = [], [], [], True
    for _ in range(PAIRS):
        a, a_t = ours(trace, u, sizes)
        b, b_t = theirs(trace, u, sizes)
        same &= all(abs(x - y) < 1e-9 for x, y in zip(a, b))
        ratios.append(b_t / a_t)
        a_s.append(a_t)
        b_s.append(b_t)
    ok &= same
    requests = os.path.getsize(trace) // 24
    print(f"{name:14} {u:8} {requests:>9} {statistics.median(a_s):>9.3f} s "
          f"{statistics.median(b_s):>13.3f} s {statistics.median(ratios):>6.1f}x "
          f"{min(ratios):>5.1f}x-{max(ratios):.1f}x {'identical' if same else 'DIFFER'}")
print(f"medians of {PAIRS} alternating pairs; the ratio is per pair; cdnlab's time is the whole "
      "command, libCacheSim's the 10 process_trace calls")
sys.exit(0 if ok else 1)
