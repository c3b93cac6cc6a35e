"""Ctrl-C stops a long call: KeyboardInterrupt within a few seconds, and the next call works.
The GIL is released meanwhile: another Python thread keeps running."""
import signal
import subprocess
import sys
import textwrap
import time

import cdnlab

# A process started with SIGINT ignored (a background job of a non-interactive shell, nohup)
# passes the ignoring on, and Python then installs no KeyboardInterrupt handler: the scripts
# restore it, as an interactive session has it, so the tests do not depend on how they run.
RESTORE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"

SCRIPT = RESTORE + textwrap.dedent("""
    import sys, threading, time, cdnlab
    trace = sys.argv[1]
    ticks = []
    def tick():
        while len(ticks) < 10**6:
            ticks.append(time.monotonic()); time.sleep(0.01)
    threading.Thread(target=tick, daemon=True).start()
    sizes = [round(0.001 * (i + 1), 3) for i in range(40)]
    print("started", flush=True)
    t0 = time.monotonic()
    try:
        cdnlab.replay(trace, "all", sizes, threads=1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", round(time.monotonic() - t0, 1), flush=True)
    # The GIL was released: the ticker thread ran during the replay.
    print("ticks", sum(1 for t in ticks if t > t0 + 0.2), flush=True)
    # A stop does not outlive the call it stopped.
    print("after", cdnlab.replay(trace, "lru", 100)["hits"][0], flush=True)
""")


def test_ctrl_c_stops_a_long_replay(cli, tmp_path):
    trace = tmp_path / "long.oracleGeneral"
    cli("gen-trace", "--out", trace, "--objects", 100000, "--requests", 2000000)
    p = subprocess.Popen([sys.executable, "-c", SCRIPT, str(trace)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    # 640 caches over 2 x 10^6 requests: half a minute or more on one thread, so it is still
    # running when the signal comes.
    time.sleep(1.5)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - sent
    print(f"stopped {took:.2f} s after the signal")  # pytest -s shows it
    lines = out.splitlines()
    assert lines[0].startswith("interrupted"), (out, err)
    assert took < 10, f"stopped {took:.1f} s after the signal"
    assert int(lines[1].split()[1]) > 10, "another thread could not run during the call"
    want = cdnlab.replay(trace, "lru", 100)["hits"][0]
    assert lines[2] == f"after {want}"


RUN_SCRIPT = RESTORE + textwrap.dedent("""
    import sys, time, cdnlab
    scenario = {"name": "stop", "experiment": "lru-che", "seed": 3, "replications": 2,
                "params": {"objects": 20000, "warmup": 20000, "requests": 4000000},
                "grid": {"alpha": [0.7, 0.8, 0.9, 1.0], "cache_size": [10, 30, 100, 300, 1000, 3000]}}
    print("started", flush=True)
    try:
        cdnlab.run(scenario, threads=1, out=sys.argv[1])
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
""")


def test_ctrl_c_stops_a_run_and_resume_finishes_it(tmp_path):
    """A sweep stopped by Ctrl-C keeps its finished cells; resume runs only the rest, and the
    results are those of an uninterrupted run."""
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", RUN_SCRIPT, str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    # Signalled once the first cell is written (the whole run takes some 10 s or more).
    deadline = time.monotonic() + 60
    while not list((out / "cells").glob("cell-*.csv")) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    stdout, err = p.communicate(timeout=120)
    assert stdout.strip() == "interrupted", (stdout, err)
    kept = len(list((out / "cells").glob("cell-*.csv")))
    assert 0 < kept < 24, kept
    scenario = eval(RUN_SCRIPT.split("scenario = ", 1)[1].split("\nprint", 1)[0])
    resumed = cdnlab.run(scenario, threads=2, out=out, resume=True)
    assert resumed.cells_run == 24 - kept
    whole = cdnlab.run(scenario, threads=2)
    assert resumed.results.equals(whole.results) and resumed.summary.equals(whole.summary)
