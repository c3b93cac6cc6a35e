"""cdnlab.gen_trace, trace_stats, merge and plot against the command on the same input."""
import json

import pandas as pd
import pytest

import cdnlab

from test_run import SCENARIO, TOML


def test_gen_trace_writes_the_commands_file(cli, tmp_path):
    cli("gen-trace", "--out", tmp_path / "cli.bin", "--objects", "500", "--requests", "4000",
        "--max-size", "2000", "--size", "10", "--seed", "3")
    got = cdnlab.gen_trace(tmp_path / "py.bin", objects=500, requests=4000, size=10,
                           max_size=2000, seed=3)
    assert got == tmp_path / "py.bin"
    assert (tmp_path / "py.bin").read_bytes() == (tmp_path / "cli.bin").read_bytes()
    # Errors name Python's arguments; nothing is written.
    for kw, name in [({"requests": 0}, "requests 0"), ({"size": 0}, "size 0"),
                     ({"size": 10, "max_size": 5}, "max_size 5"), ({"objects": 0}, "objects 0"),
                     ({"alpha": -1.0}, "alpha -1")]:
        with pytest.raises(cdnlab.CdnlabError, match=name):
            cdnlab.gen_trace(tmp_path / "bad.bin", **{"objects": 10, "requests": 10, **kw})
        assert not (tmp_path / "bad.bin").exists()


def test_trace_stats_is_the_commands_json(cli, traces, tmp_path):
    t = traces["sized"]
    _, out, _ = cli("trace-stats", "--trace", t, "--json", "--no-plot")
    want = json.loads(out)
    got = cdnlab.trace_stats(t, plot_dir=tmp_path / "figs")
    assert got == want
    assert got["requests"] > 0 and 0.5 < got["zipf"]["alpha"] < 1.1
    assert {"popularity.svg", "reuse.svg", "sizes.svg"} <= {p.name for p in (tmp_path / "figs").iterdir()}
    with pytest.raises(OSError):
        cdnlab.trace_stats(tmp_path / "missing.bin")
    with pytest.raises(cdnlab.CdnlabError, match="format"):
        cdnlab.trace_stats(t, format="nope")


def test_merge_and_plot_as_the_command(cli, tmp_path):
    """Two shards merged give the whole run's results; plot re-draws and draws a new figure,
    refusing what the command refuses with Python's argument names."""
    whole = cdnlab.run(SCENARIO, out=tmp_path / "whole")
    for i in (1, 2):
        cdnlab.run(SCENARIO, out=tmp_path / f"s{i}", shard=f"{i - 1}/2")
    with pytest.raises(cdnlab.CdnlabError, match="^shard 2/2"):
        cdnlab.run(SCENARIO, out=tmp_path / "s3", shard="2/2")
    assert cdnlab.merge([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m") == 4
    merged = cdnlab.run(SCENARIO, out=tmp_path / "m", resume=True)
    assert merged.cells_run == 0
    pd.testing.assert_frame_equal(merged.summary, whole.summary)
    # The command merges the same folders into the same files.
    cli("merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "cm")
    assert (tmp_path / "cm" / "summary.csv").read_text() == (tmp_path / "m" / "summary.csv").read_text()

    with pytest.raises(cdnlab.CdnlabError, match="declares no plots: give x and y"):
        cdnlab.plot(tmp_path / "m")
    plotted = {**SCENARIO, "plots": [{"file": "hit.svg", "x": "cache_size", "y": ["hit_ratio"],
                                      "series": "alpha"}]}
    cdnlab.run(plotted, out=tmp_path / "p")
    (tmp_path / "p" / "hit.svg").unlink()
    redrawn = cdnlab.plot(tmp_path / "p", format="svg")
    assert [p.name for p in redrawn] == ["hit.svg"] and redrawn[0].is_file()
    new = cdnlab.plot(tmp_path / "m", x="cache_size", y="hit_ratio", series="alpha",
                      where={}, log_x=True, name="by_size", format="both", scale=1)
    assert sorted(p.name for p in new) == ["by_size.png", "by_size.svg"]
    one = cdnlab.plot(tmp_path / "m", x="cache_size", y=["hit_ratio"], where={"alpha": 0.8},
                      name="one", format="svg")
    assert [p.name for p in one] == ["one.svg"]
    for kw, msg in [({"scale": 9}, "scale 9"), ({"name": "a/b", "x": "alpha", "y": "hit_ratio"}, "name a/b"),
                    ({"x": "alpha", "y": "hit_ratio", "where": ["alpha"]}, "where alpha"),
                    ({"series": "alpha"}, "series: give x"), ({"x": "alpha"}, "x: give y")]:
        with pytest.raises(cdnlab.CdnlabError, match=msg):
            cdnlab.plot(tmp_path / "m", **kw)
    with pytest.raises(cdnlab.CdnlabError, match="dirs"):
        cdnlab.merge([], tmp_path / "x")
