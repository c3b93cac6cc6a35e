"""Fixtures: the `cdnlab` binary the answers are compared with, and small traces it writes."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    """$CDNLAB_BIN, else the newest of target/{release,debug}/cdnlab (built by `cargo build`)."""
    if os.environ.get("CDNLAB_BIN"):
        exe = Path(os.environ["CDNLAB_BIN"])
        if not exe.is_file():
            raise RuntimeError(f"CDNLAB_BIN={exe}: no such file (build it with `cargo build -p cdnlab-cli`)")
        return exe
    found = [p for p in (ROOT / "target/release/cdnlab", ROOT / "target/debug/cdnlab") if p.exists()]
    if not found:
        raise RuntimeError("no cdnlab binary: run `cargo build -p cdnlab-cli` or set CDNLAB_BIN")
    return max(found, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="session")
def cli():
    """Runs the command; returns (exit code, stdout, stderr)."""
    exe = _binary()

    def call(*args, check=True):
        r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, timeout=300)
        if check and r.returncode != 0:
            raise AssertionError(f"cdnlab {' '.join(map(str, args))} failed: {r.stderr}")
        return r.returncode, r.stdout, r.stderr

    return call


@pytest.fixture(scope="session")
def traces(tmp_path_factory, cli):
    """A unit-size trace and a sized one (Zipf 0.8, 2 x 10^5 requests) and the sized one
    compressed with zstd (if the module is there, else None)."""
    d = tmp_path_factory.mktemp("traces")
    unit = d / "unit.oracleGeneral"
    sized = d / "sized.oracleGeneral"
    cli("gen-trace", "--out", unit, "--objects", 20000, "--requests", 200000, "--seed", 3)
    cli("gen-trace", "--out", sized, "--objects", 20000, "--requests", 200000, "--seed", 4,
        "--size", 100, "--max-size", 100000)
    return {"unit": unit, "sized": sized}


@pytest.fixture(scope="session")
def root():
    return ROOT
