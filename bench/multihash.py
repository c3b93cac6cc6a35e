"""Multi-hash DHT simulator benchmark (run by bench/multihash.sh).

1. Throughput: N = 10^4 nodes, M = 10^6 files (Zipf 1.0), K = 1024, load 0.5, windows of 200
   time units (10^6 requests each), one thread, best of 3. Every request runs random binary
   search, and every probe is a ring lookup of h_i(f) and a question to its owner. Reported end
   to end (setup included) and per window in steady state (the time of 20 windows minus that of
   1, over the requests of the 19 between).
2. Memory: peak resident memory at N = 10^5 nodes, M = 10^6 files (target: under 4 GiB).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runcell import best_of  # noqa: E402

cdnlab = sys.argv[1]
base = {"nodes": 10000, "files": 1000000, "k": 1024}

w20, _, r20 = best_of(3, cdnlab, "multihash", {**base, "horizon": 20, "measure": 5}, threads=1)
w1, _, r1 = best_of(3, cdnlab, "multihash", {**base, "horizon": 1, "measure": 1}, threads=1)
q20, q1 = float(r20["requests_mean"]), float(r1["requests_mean"])
print(f"throughput: {q20:.3g} requests ({float(r20['probes_per_request_mean']):.2f} probes each) "
      f"in {w20:.2f} s on one thread (best of 3) = {q20 / w20 / 1e6:.1f} M requests/s end to end; "
      f"steady state {(q20 - q1) / (w20 - w1) / 1e6:.1f} M requests/s")

_, rss, row = best_of(1, cdnlab, "multihash",
                      {"nodes": 100000, "files": 1000000, "k": 1024, "horizon": 3, "measure": 1},
                      threads=1)
print(f"memory: N = 1e5 nodes, M = 1e6 files: peak RSS {rss / 2**30:.2f} GiB "
      f"({float(row['replicas_mean']):.0f} replicas)")
