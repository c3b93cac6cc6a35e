"""Miss ratios of cdnlab and libCacheSim side by side, in objects and bytes, in oracleGeneral,
vscsi and twr; see agree.sh."""
import json
import os
import subprocess
import sys

import libcachesim as lcs

cdnlab, unit_trace, sized_trace = sys.argv[1:4]
sizes = [int(s) for s in sys.argv[4].split(",")]
# The real sample (libCacheSim's cloudPhysicsIO, read from outside the project), when present:
# in oracleGeneral, replayed in objects at the same capacities and in bytes at 16, 64 and 256 MiB
# (its working set is 1.9 GiB, its objects 4 KiB to 68 KiB); in vscsi (the same requests, with
# each request's own length as its size) in bytes.
real = sys.argv[5] if len(sys.argv) > 5 and os.path.isdir(sys.argv[5]) else None
# A twr trace written here with numpy (seeded): Zipf-like ids, key and value sizes, 5% empty
# values, gets, sets and deletes (libCacheSim skips gets of empty values, and so does cdnlab).
twr = sys.argv[6]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lcs_policies import EXACT, POLICIES  # noqa: E402

TIME_LIMIT = 120
LIBCACHESIM_RUN = """
import sys, libcachesim as lcs
cls, trace, size, ignore = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
kind = getattr(lcs.TraceType, sys.argv[5])
reader = lcs.TraceReader(trace, kind, lcs.ReaderInitParam(ignore_obj_size=ignore))
mr, bmr = getattr(lcs, cls)(size).process_trace(reader)
print(repr(mr), repr(bmr))
"""


KIND = {"oracle-general": "ORACLE_GENERAL_TRACE", "vscsi": "VSCSI_TRACE", "twr": "TWR_TRACE"}


def write_twr(path, n=200_000, seed=5):
    import numpy as np
    rng = np.random.default_rng(seed)
    rec = np.zeros(n, dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("kv", "<u4"), ("op_ttl", "<u4")]))
    rec["t"] = np.arange(n) // 100
    rec["id"] = rng.zipf(1.2, n) % 30000
    key = rng.integers(10, 60, n).astype("<u4")
    value = rng.integers(0, 20000, n).astype("<u4")
    value[rng.random(n) < 0.05] = 0
    op = rng.choice([1, 2, 3, 9], n, p=[0.7, 0.1, 0.15, 0.05]).astype("<u4")
    rec["kv"] = (key << 22) | value
    rec["op_ttl"] = (op << 24) | 3600
    rec.tofile(path)


def libcachesim(cls, trace, size, objects, fmt):
    """The miss ratio and byte miss ratio, or why there are none. In a child process with a time limit: libCacheSim's
    LFUDA can crash (a segmentation fault) or crawl (it scans every key up to the largest)."""
    try:
        r = subprocess.run([sys.executable, "-c", LIBCACHESIM_RUN, cls, trace, str(size),
                            "1" if objects else "0", KIND[fmt]], capture_output=True, text=True,
                           timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return f"libCacheSim ran over {TIME_LIMIT} s"
    if r.returncode != 0:
        return f"libCacheSim failed (exit {r.returncode})"
    mr, bmr = r.stdout.strip().splitlines()[-1].split()
    return float(mr), float(bmr)


differ = False
if not os.path.exists(twr):
    write_twr(twr)
runs = [("objects", unit_trace, sizes, "oracle-general"),
        ("bytes", sized_trace, [s * 500 for s in sizes], "oracle-general"),
        ("objects", twr, sizes, "twr"), ("bytes", twr, [1 << 20, 16 << 20, 64 << 20], "twr")]
if real:
    og, vscsi = (os.path.join(real, f) for f in
                 ("cloudPhysicsIO.oracleGeneral.bin", "cloudPhysicsIO.vscsi"))
    mib = [16 << 20, 64 << 20, 256 << 20]
    runs += [("objects", og, sizes, "oracle-general"), ("bytes", og, mib, "oracle-general"),
             ("bytes", vscsi, mib, "vscsi")]
else:
    print("the real sample was not found; only the generated traces are replayed", flush=True)
for unit, trace, caps, fmt in runs:
    out = subprocess.run([cdnlab, "cache-replay", "--trace", trace, "--format", fmt,
                          "--policy", ",".join(POLICIES),
                          "--size", ",".join(map(str, caps)), "--size-unit", unit, "--json",
                          "--no-plot"], check=True, capture_output=True, text=True).stdout
    ours = {(r["policy"], r["size"]): r for r in map(json.loads, out.splitlines())}
    print(f"# {unit}, {fmt}: {trace}", flush=True)
    for p, cls in POLICIES.items():
        for s in caps:
            o = ours[(p, s)]
            got = libcachesim(cls, trace, s, unit == "objects", fmt)
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
                # libCacheSim's Belady reads next accesses from oracleGeneral records only;
                # cdnlab fills them in for the other formats, so only there is it the optimum.
                exact = p in EXACT[unit] and (p != "belady" or fmt == "oracle-general")
                verdict = "same" if same else ("DIFFERENT" if exact else "differs (see docs)")
                theirs = f"{mr:.6f} {bmr:.6f}"
                differ = differ or (exact and not same)
            print(f"{p:9} {unit:7} {s:9} cdnlab {o['miss_ratio']:.6f} {o['byte_miss_ratio']:.6f} "
                  f"libCacheSim {theirs} {verdict}", flush=True)
sys.exit(1 if differ else 0)
