#!/usr/bin/env python3
"""Per-download throughput of F concurrent keep-alive HTTP flows to one edge, as GWTW video
users measure it (docs/testbed.md#gwtw-video, "Where the model breaks"). Run it inside a
testbed's users namespace while the testbed is up with an origin and an edge serving, e.g.:

  sudo cdnlab testbed up scenarios/testbed-gwtw-shallow.toml      # prints the namespaces
  sudo ip netns exec NS_ORIGIN cdnlab live origin --listen 198.18.211.1:8080 --objects 60 \
       --min-size 32768 --max-size 32768 &
  sudo ip netns exec NS_EDGE6 cdnlab live edge --origin 198.18.211.1:8080 --listen 198.18.211.8:8080 &
  sudo ip netns exec NS_USERS python3 bench/testbed-downloads.py 198.18.211.8:8080 100 3

Prints, per flow, download-time quantiles and how many downloads fell below 0.9 of the wanted
rate (125000 bytes/s; a 32 KiB object). Bounded: F flows x N downloads, 5 s timeout each.
"""
import http.client
import sys
import threading
import time

host, port = sys.argv[1].rsplit(":", 1)
n, flows = int(sys.argv[2]), int(sys.argv[3])
if not (1 <= n <= 10000 and 1 <= flows <= 16):
    sys.exit("downloads per flow: 1 to 10000; flows: 1 to 16")
rate, times = 125000.0, [[] for _ in range(flows)]


def flow(j):
    c = http.client.HTTPConnection(host, int(port), timeout=5)
    for i in range(n):
        t = time.monotonic()
        c.request("GET", "/content/%d" % (i % 10))
        body = c.getresponse().read()
        times[j].append((len(body), time.monotonic() - t))
        time.sleep(0.001)


threads = [threading.Thread(target=flow, args=(j,)) for j in range(flows)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for j, ts in enumerate(times):
    d = sorted(s for _, s in ts)
    q = lambda p: d[min(len(d) - 1, int(p * len(d)))]
    short = sum(1 for b, s in ts if b / s / rate < 0.9)
    share = sum(b for b, _ in ts) / sum(s for _, s in ts) / rate
    print(f"flow {j}: download s p50 {q(0.5):.3f} p90 {q(0.9):.3f} p99 {q(0.99):.3f} "
          f"max {d[-1]:.3f}; below 0.9 of the rate: {short} of {len(ts)}; mean share {share:.2f}")
