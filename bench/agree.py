"""Miss ratios of cdnlab and libCacheSim side by side on one trace; see agree.sh."""
import json
import subprocess
import sys

import libcachesim as lcs
cdnlab, trace = sys.argv[1], sys.argv[2]
sizes = [int(s) for s in sys.argv[3].split(",")]
pols = {"lru": lcs.LRU, "fifo": lcs.FIFO, "lfu": lcs.LFU, "s3fifo": lcs.S3FIFO, "sieve": lcs.Sieve, "clock": lcs.Clock}
out = subprocess.run([cdnlab, "cache-replay", "--trace", trace, "--policy", ",".join(pols), "--size",
                      ",".join(map(str, sizes)), "--json", "--no-plot"], check=True, capture_output=True, text=True).stdout
ours = {(r["policy"], r["size"]): r for r in map(json.loads, out.splitlines())}
differ = False
for p, cls in pols.items():
    for s in sizes:
        reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
        mr, _ = cls(s).process_trace(reader)
        o = ours[(p, s)]
        same = round(mr * o["requests"]) == o["misses"]
        print(f"{p:7} {s:7} cdnlab {o['miss_ratio']:.6f} libCacheSim {mr:.6f} {'same' if same else 'DIFFERENT'}")
        differ = differ or not same
sys.exit(1 if differ else 0)
