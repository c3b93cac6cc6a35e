"""What bench/abuse.py and bench/abuse2.py share: the normal client, resident memory from
/proc, nginx's processes, and waiting for a port."""
import asyncio
import os
import re
import socket
import subprocess
import sys
import time


def rss(pids):
    """Resident bytes of `pids` together."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                m = re.search(r"VmRSS:\s+(\d+)", f.read())
        except OSError:
            continue
        if m:  # an exited process (nginx's cache loader, once done) has none
            total += int(m.group(1)) * 1024
    return total


def nginx_pids(master):
    """nginx's master and its workers."""
    out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout
    return [master] + [int(x) for x in out.split()]


def wait_port(port):
    """Waits up to 10 s for something to listen on loopback `port`; exits if nothing does."""
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


async def normal(port, path, ids, n):
    """n requests from 127.0.0.1 for `path`0 .. `path`ids-1, one connection each, 5 ms apart:
    (p99 seconds, answered 200). A failure counts at its time to fail. ABUSE_TIMES=1 prints
    the distribution on standard error."""
    times, ok = [], 0
    for i in range(n):
        t = time.perf_counter()
        try:
            r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
            w.write(f"GET {path}{i % ids} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
            data = await asyncio.wait_for(r.read(), 5)
            w.close()
            ok += data.startswith(b"HTTP/1.1 200")
        except (OSError, asyncio.TimeoutError):
            pass
        times.append(time.perf_counter() - t)
        await asyncio.sleep(0.005)
    times.sort()
    if os.environ.get("ABUSE_TIMES"):
        print("times (ms):", [round(t * 1e3, 1) for t in times[::10]] + [round(times[-1] * 1e3, 1)],
              file=sys.stderr)
    return times[int(0.99 * len(times)) - 1], ok
