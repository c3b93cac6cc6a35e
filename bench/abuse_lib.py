"""What bench/abuse.py and bench/abuse2.py share: resident memory from /proc, nginx's
processes, and waiting for a port."""
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
