"""What minisim.py and mrcprofiler.py share: the traces, a curve's sizes, running cdnlab."""
import csv
import json
import os
import subprocess
import sys

# The fewest objects a miniature should hold (cdnlab's MIN_MINIATURE).
MIN_MINIATURE = 100


def traces(unit, sized, real, big):
    """(name, path, unit) of agree.sh's two traces, the real sample when there, and the big one."""
    out = [("zipf0.9 unit", unit, "objects"), ("zipf0.9 sized", sized, "bytes")]
    og = os.path.join(real, "cloudPhysicsIO.oracleGeneral.bin")
    if os.path.exists(og):
        out += [("cloudPhysics", og, "objects"), ("cloudPhysics", og, "bytes")]
    if big:
        out += [("zipf0.8 10^7", big, "objects")]
    return out


def chosen(unit, sized, real, big=""):
    """`traces`, only those whose "name unit" contains $ONLY (all without it)."""
    only = os.environ.get("ONLY", "")
    return [(n, t, u) for n, t, u in traces(unit, sized, real, big) if only in f"{n} {u}"]


def mae(xs, ys):
    """The mean absolute difference of two curves."""
    return sum(abs(x - y) for x, y in zip(xs, ys)) / len(xs)


def run(cdnlab, *args):
    """`cdnlab ARGS...`, its --json lines parsed; exits with its stderr if it fails."""
    out = subprocess.run([cdnlab, *args], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"cdnlab {' '.join(args)} failed: {out.stderr}")
    return [json.loads(line) for line in out.stdout.splitlines()]


def working_set(cdnlab, trace, unit):
    row = run(cdnlab, "cache-replay", "--trace", trace, "--size", "0.5", "--size-unit", unit,
              "--json", "--no-plot")[0]
    return row["working_set_objects"], row["working_set_bytes"]


def sizes_for(cdnlab, trace, unit, rate):
    """10 sizes, log-spaced from where a miniature at `rate` holds MIN_MINIATURE objects (of the
    mean size, in bytes) to 80% of the working set."""
    objects, nbytes = working_set(cdnlab, trace, unit)
    mean = nbytes / objects if unit == "bytes" else 1
    lo, hi = MIN_MINIATURE * mean / rate, (nbytes if unit == "bytes" else objects) * 0.8
    return sorted({round(lo * (hi / lo) ** (i / 9)) for i in range(10)})


def write_results(name, rows, fields=None):
    """Writes `rows` (dicts) to bench/results/NAME.csv, columns `fields` (default: the first
    row's keys), and says so."""
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", f"{name}.csv")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields or list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {out}")
