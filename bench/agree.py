"""Miss ratios of cdnlab and libCacheSim side by side, in objects and bytes; see agree.sh."""
import json
import os
import subprocess
import sys

import libcachesim as lcs

cdnlab, unit_trace, sized_trace = sys.argv[1:4]
sizes = [int(s) for s in sys.argv[4].split(",")]
# The real sample (libCacheSim's cloudPhysicsIO, read from outside the project), when present:
# replayed in objects at the same capacities and in bytes at 16, 64 and 256 MiB (its working
# set is 1.9 GiB, its objects 4 KiB to 68 KiB).
real = sys.argv[5] if len(sys.argv) > 5 and os.path.exists(sys.argv[5]) else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lcs_policies import EXACT, POLICIES  # noqa: E402

TIME_LIMIT = 120
LIBCACHESIM_RUN = """
import sys, libcachesim as lcs
cls, trace, size, ignore = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE,
                         lcs.ReaderInitParam(ignore_obj_size=ignore))
mr, bmr = getattr(lcs, cls)(size).process_trace(reader)
print(repr(mr), repr(bmr))
"""


def libcachesim(cls, trace, size, objects):
    """The miss ratio and byte miss ratio, or why there are none. In a child process with a time limit: libCacheSim's
    LFUDA can crash (a segmentation fault) or crawl (it scans every key up to the largest)."""
    try:
        r = subprocess.run([sys.executable, "-c", LIBCACHESIM_RUN, cls, trace, str(size),
                            "1" if objects else "0"], capture_output=True, text=True,
                           timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return f"libCacheSim ran over {TIME_LIMIT} s"
    if r.returncode != 0:
        return f"libCacheSim failed (exit {r.returncode})"
    mr, bmr = r.stdout.strip().splitlines()[-1].split()
    return float(mr), float(bmr)


differ = False
runs = [("objects", unit_trace, sizes), ("bytes", sized_trace, [s * 500 for s in sizes])]
if real:
    runs += [("objects", real, sizes), ("bytes", real, [16 << 20, 64 << 20, 256 << 20])]
else:
    print("the real sample was not found; only the generated traces are replayed", flush=True)
for unit, trace, caps in runs:
    out = subprocess.run([cdnlab, "cache-replay", "--trace", trace, "--policy", ",".join(POLICIES),
                          "--size", ",".join(map(str, caps)), "--size-unit", unit, "--json",
                          "--no-plot"], check=True, capture_output=True, text=True).stdout
    ours = {(r["policy"], r["size"]): r for r in map(json.loads, out.splitlines())}
    print(f"# {unit}: {trace}", flush=True)
    for p, cls in POLICIES.items():
        for s in caps:
            o = ours[(p, s)]
            got = libcachesim(cls, trace, s, unit == "objects")
            if isinstance(got, str):
                verdict, theirs = got, "    -   "
            else:
                mr, bmr = got
                # Same misses, and in bytes the same missed bytes. Counting objects, libCacheSim
                # reads every size as 1 (ignore_obj_size), so its byte miss ratio is its miss
                # ratio; cdnlab's is over the trace's sizes, and is not compared there.
                same = round(mr * o["requests"]) == o["misses"]
                if unit == "bytes":
                    same = same and round(bmr * o["bytes"]) == o["miss_bytes"]
                verdict = "same" if same else ("DIFFERENT" if p in EXACT[unit] else "differs (see docs)")
                theirs = f"{mr:.6f} {bmr:.6f}"
                differ = differ or (p in EXACT[unit] and not same)
            print(f"{p:9} {unit:7} {s:9} cdnlab {o['miss_ratio']:.6f} {o['byte_miss_ratio']:.6f} "
                  f"libCacheSim {theirs} {verdict}", flush=True)
sys.exit(1 if differ else 0)
