"""The live edge under attack, side by side with nginx where nginx has the feature (run by
bench/abuse.sh). Prints, per attack and server: resident memory, the p99 of 200 normal requests
made during the attack, how many of those failed, and what the attack got."""
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time

from abuse_lib import nginx_pids, normal, rss, wait_port

cdnlab = sys.argv[1]
work = tempfile.mkdtemp()
os.chmod(work, 0o755)  # nginx workers run unprivileged
procs = []

SMALL, LARGE, EDGE, NGX, DHT = 26080, 26079, 26081, 26082, 26090


def spawn(*args):
    p = subprocess.Popen([cdnlab, *args], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    procs.append(p)
    return p


async def hold(port, n, source, send=b""):
    """n connections from `source`, each sending `send` byte by byte every second."""
    conns = []
    for _ in range(n):
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            conns.append((r, w))
        except OSError:
            pass
    return conns


async def drip(conns, head):
    for b in head:
        for _, w in conns:
            if not w.is_closing():  # asyncio logs a warning per write to a closed socket
                try:
                    w.write(bytes([b]))
                except OSError:
                    pass
        await asyncio.sleep(1)


def held(port, source):
    """Connections from `source` the server still holds open (counted on the server's side with
    ss: a socket the server has closed no longer counts, whether or not the client has read the
    close yet)."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( sport = :{port} )",
                          "dst", source], capture_output=True, text=True, check=True).stdout
    return len(out.splitlines())


async def attack(name, port, pids, run, path, ids):
    """Runs `run` (which starts the attack and returns a description of what it got) and
    normal requests for `path`0..ids meanwhile."""
    task = asyncio.ensure_future(run(port, path))
    await asyncio.sleep(2)
    p99, ok = await normal(port, path, ids, 200)
    failed = 200 - ok
    got = await task
    print(f"{name:40s} {rss(pids) / 2**20:8.1f} MiB {p99 * 1000:9.1f} ms {failed:6d}   {got}")


async def slowloris(port, _path):
    conns = await hold(port, 1000, "127.0.0.3")
    await drip(conns, b"GET /content/1 HTTP/1.1\r\nhost: x\r\n")
    return f"{held(port, '127.0.0.3')} of {len(conns)} slow heads held by the server after 35 s"


async def flood(port, _path):
    conns = await hold(port, 2000, "127.0.0.2")
    await asyncio.sleep(1)
    kept = held(port, "127.0.0.2")
    await asyncio.sleep(5)
    return f"the server holds {kept} of {len(conns)} connections, refused {len(conns) - kept}"


async def never_read(port, path):
    conns = await hold(port, 100, "127.0.0.4")
    for i, (_, w) in enumerate(conns):
        w.write(f"GET {path}{i % 10} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
    await asyncio.sleep(12)
    return f"{held(port, '127.0.0.4')} of {len(conns)} never-reading clients held after 12 s"


def main():
    spawn("live", "origin", "--listen", f"127.0.0.1:{SMALL}", "--objects", "100000")
    spawn("live", "origin", "--listen", f"127.0.0.1:{LARGE}", "--objects", "10",
          "--min-size", str(8 << 20), "--max-size", str(8 << 20))
    os.makedirs(f"{work}/cache")
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(f"""worker_processes 2; pid {work}/nginx.pid; error_log {work}/error.log crit;
events {{ worker_connections 8192; }}
http {{ access_log off; send_timeout 5s; limit_conn_zone $binary_remote_addr zone=per:1m;
  proxy_cache_path {work}/cache keys_zone=edge:16m max_size=64m use_temp_path=off;
  server {{ listen 127.0.0.1:{NGX}; limit_conn per 256; proxy_cache edge;
    proxy_cache_valid 200 1h; proxy_cache_lock on;
    location /content/ {{ proxy_pass http://127.0.0.1:{SMALL}; }}
    location /large/ {{ proxy_pass http://127.0.0.1:{LARGE}/content/; }} }} }}
""")
    ngx = subprocess.Popen(["nginx", "-c", f"{work}/nginx.conf", "-p", work, "-g", "daemon off;"])
    procs.append(ngx)
    wait_port(NGX)
    if ngx.poll() is not None:
        sys.exit(f"nginx exited with {ngx.returncode} (is port {NGX} taken?)")
    print(f"{'attack / server':40s} {'RSS':>12s} {'p99':>12s} {'failed':>6s}   what the attack got")
    for attack_name, run in [("slowloris", slowloris), ("flood from one address", flood),
                             ("never-reading clients", never_read)]:
        large = attack_name == "never-reading clients"
        for server in ["cdnlab edge", "nginx"]:
            edge = None
            if server == "cdnlab edge":
                # The edge has one origin: the large objects' for the never-reading clients.
                edge = spawn("live", "edge", "--origin", f"127.0.0.1:{LARGE if large else SMALL}",
                             "--listen", f"127.0.0.1:{EDGE}", "--capacity", str(64 << 20),
                             "--send-timeout-ms", "5000")
                port, pids, path = EDGE, [edge.pid], "/content/"
            else:
                port, pids, path = NGX, nginx_pids(ngx.pid), "/large/" if large else "/content/"
            wait_port(port)
            asyncio.run(attack(f"{attack_name} / {server}", port, pids, run, path,
                               10 if large else 50))
            if edge:
                edge.kill()
                edge.wait()
    # The replica scan and the miss load: cdnlab only (nginx has no DHT; its cache is on disk).
    ring = f"{work}/ring.json"
    with open(ring, "w") as f:
        f.write('{"secret": "0123456789abcdef-bench", "k": 8, "vnodes": 8, "edges": ['
                + ",".join(f'{{"id": {i}, "addr": "127.0.0.1:{DHT + i}"}}' for i in range(3))
                + "]}")
    dht = [spawn("live", "edge", "--ring", ring, "--id", str(i), "--origin",
                 f"127.0.0.1:{SMALL}", "--capacity", str(16 << 20)) for i in range(3)]
    for i in range(3):
        wait_port(DHT + i)
    before = rss([dht[0].pid])
    codes = {}
    s = socket.create_connection(("127.0.0.1", DHT))
    f = s.makefile("rb")
    for i in range(20000):
        s.sendall(f"GET /replica/{i}/1 HTTP/1.1\r\nhost: x\r\n\r\n".encode())
        status = f.readline().split()[1].decode()
        n = 0
        while (line := f.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
        f.read(n)
        codes[status] = codes.get(status, 0) + 1
    print(f"{'replica scan / DHT edge':40s} {rss([dht[0].pid]) / 2**20:8.1f} MiB "
          f"(from {before / 2**20:.1f}; capacity 16 MiB)   answers {codes}")
    # A miss load against the capacity: the edge's resident memory after it.
    for size, n in [(1024, 100_000), (65536, 4000)]:
        origin = spawn("live", "origin", "--listen", "127.0.0.1:26070", "--objects", "1000000",
                       "--min-size", str(size), "--max-size", str(size))
        edge = spawn("live", "edge", "--origin", "127.0.0.1:26070", "--listen",
                     "127.0.0.1:26071", "--capacity", str(64 << 20))
        wait_port(26070)
        wait_port(26071)
        start = rss([edge.pid])
        s = socket.create_connection(("127.0.0.1", 26071))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        f = s.makefile("rb")
        for i in range(n):
            s.sendall(f"GET /content/{i} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
            f.readline()
            m = 0
            while (line := f.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    m = int(line.split(b":")[1])
            f.read(m)
        end = rss([edge.pid])
        print(f"{f'miss load, {size // 1024} KiB objects':40s} {end / 2**20:8.1f} MiB "
              f"(capacity 64 MiB: {(end - start) / (64 << 20):.2f} x capacity above the "
              f"{start / 2**20:.1f} MiB at start)   {n} misses")
        edge.kill()
        origin.kill()
        edge.wait()
        origin.wait()


try:
    main()
finally:
    for p in procs:
        # SIGTERM for nginx: its master then stops the workers (SIGKILL would orphan them,
        # still listening, and the next run's nginx could not bind).
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    subprocess.run(["rm", "-rf", work])
