"""cdnlab.run, experiments and reproduce against the command on the same scenarios."""
import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import cdnlab

SCENARIO = {
    "name": "py-che",
    "experiment": "lru-che",
    "seed": 5,
    "replications": 3,
    "params": {"objects": 1000, "warmup": 5000, "requests": 20000},
    "grid": {"alpha": [0.8, 1.0], "cache_size": [10, 100]},
}

TOML = textwrap.dedent("""\
    name = "py-che"
    experiment = "lru-che"
    seed = 5
    replications = 3

    [params]
    objects = 1000
    warmup = 5000
    requests = 20000

    [grid]
    alpha = [0.8, 1.0]
    cache_size = [10, 100]
    """)


def test_run_matches_the_command(cli, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(TOML)
    cli("run", path, "--out", tmp_path / "cli")
    want_summary = pd.read_csv(tmp_path / "cli" / "summary.csv")
    want_results = pd.read_csv(tmp_path / "cli" / "results.csv")
    from_file = cdnlab.run(path, threads=2)
    from_dict = cdnlab.run(SCENARIO, threads=1)
    for r in (from_file, from_dict):
        pd.testing.assert_frame_equal(r.summary, want_summary)
        pd.testing.assert_frame_equal(r.results, want_results)
        assert r.out is None and r.cells_run == 4
    kept = cdnlab.run(path, out=tmp_path / "py")
    assert (tmp_path / "py" / "summary.csv").read_text() == (tmp_path / "cli" / "summary.csv").read_text()
    assert kept.out == tmp_path / "py"
    # Again into the same folder: refused without resume, as the command does.
    with pytest.raises(cdnlab.CdnlabError, match="resume"):
        cdnlab.run(path, out=tmp_path / "py")
    assert cdnlab.run(path, out=tmp_path / "py", resume=True).cells_run == 0


def test_bad_scenarios_raise_the_commands_message(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(TOML.replace("replications = 3", "replications = 0"))
    code, _, err = cli("run", bad, "--out", tmp_path / "o", check=False)
    with pytest.raises(cdnlab.CdnlabError) as e:
        cdnlab.run(bad)
    assert code != 0 and err.strip() == f"error: {e.value}"
    # A dict's errors name its keys, never a line of the TOML it was written as.
    for bad_dict, where in [
        ({**SCENARIO, "replications": 0}, 'scenario["replications"]: replications = 0'),
        ({**SCENARIO, "experiment": "nope"}, 'scenario["experiment"]: unknown experiment'),
        ({**SCENARIO, "params": {"objects": "x"}}, 'scenario["params"]["objects"]: parameter'),
        ({**SCENARIO, "grid": {"alpha": [0.8, 9]}}, 'scenario["grid"]["alpha"]: parameter'),
        ({**SCENARIO, "bogus": 1}, 'scenario["bogus"]: unknown field'),
        ({**SCENARIO, "plots": [{"file": "a.svg", "x": "alpha", "y": ["hit_ratio"]},
                                {"file": "b.svg", "x": "alpha", "y": ["hit_ratio"], "nope": 1}]},
         'scenario["plots"][1]["nope"]: unknown field'),
        ({**SCENARIO, "plots": [{"x": "alpha", "y": ["hit_ratio"]}]},
         'scenario["plots"][0]: missing field `file`'),
    ]:
        with pytest.raises(cdnlab.CdnlabError) as e:
            cdnlab.run(bad_dict)
        assert str(e.value).startswith(where) and "line" not in str(e.value), (where, e.value)
    with pytest.raises(cdnlab.CdnlabError, match="None"):
        cdnlab.run({**SCENARIO, "seed": None})
    with pytest.raises(OSError, match="missing.toml"):
        cdnlab.run(tmp_path / "missing.toml")


def test_experiments_lists_what_the_command_lists(cli):
    _, out, _ = cli("experiments")
    names = [line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")]
    e = cdnlab.experiments()
    assert list(dict.fromkeys(e["experiment"])) == names
    che = e[e["experiment"] == "lru-che"]
    assert {"alpha", "cache_size", "objects"} <= set(che[che["kind"] == "param"]["name"])
    assert "hit_ratio" in set(che[che["kind"] == "metric"]["name"])


def test_reproduce_returns_the_claims(cli, tmp_path):
    claims = cdnlab.reproduce(only="cache-che", out=tmp_path / "py")
    cli("reproduce", "--only", "cache-che", "--out", tmp_path / "cli")
    want = json.loads((tmp_path / "cli" / "claims.json").read_text())["claims"]
    assert list(claims.columns) == cdnlab.CLAIM_COLUMNS
    assert claims["id"].tolist() == [c["id"] for c in want]
    assert claims["pass"].tolist() == [c["pass"] for c in want]
    assert claims["in_words"].tolist() == [c["in_words"] for c in want]
    assert (tmp_path / "py" / "report.html").exists()
    with pytest.raises(cdnlab.CdnlabError) as e:
        cdnlab.reproduce(only="nope", out=tmp_path / "x")
    code, _, err = cli("reproduce", "--only", "nope", "--out", tmp_path / "x", check=False)
    assert code != 0 and err.strip() == f"error: {e.value}"
    assert "cache-che" in cdnlab.reproductions()["id"].tolist()


def test_a_partial_reproduce_never_replaces_another_report(cli, tmp_path, monkeypatch):
    """As the command: without ``out`` a selection writes to a folder of its own; into a folder
    holding another selection's report it is refused unless ``replace=True``."""
    monkeypatch.chdir(tmp_path)
    cdnlab.reproduce(only="mh-x1")
    first = (tmp_path / "out/reproduce-mh-x1/claims.json").read_text()
    assert not (tmp_path / "out/reproduce").exists()
    with pytest.raises(cdnlab.CdnlabError, match="--replace"):
        cdnlab.reproduce(only="gwtw-e8", out="out/reproduce-mh-x1")
    assert (tmp_path / "out/reproduce-mh-x1/claims.json").read_text() == first
    claims = cdnlab.reproduce(only="gwtw-e8", out="out/reproduce-mh-x1", replace=True)
    assert all(i.startswith("gwtw.") for i in claims["id"])


def test_without_pandas_tables_are_numpy_columns(traces, tmp_path):
    """pandas hidden: the same tables as dicts of numpy arrays."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules["pandas"] = None
        import cdnlab, numpy as np
        t = cdnlab.replay({str(traces["unit"])!r}, ["lru", "fifo"], [0.01, 0.1])
        assert isinstance(t, dict) and t["policy"].tolist() == ["lru", "lru", "fifo", "fifo"]
        assert t["hits"].dtype == np.int64 and t["miss_ratio"].dtype == np.float64
        assert np.isnan(t["size_fraction"]).sum() == 0
        r = cdnlab.run({SCENARIO!r})
        assert r.summary["hit_ratio_mean"].dtype == np.float64 and len(r.summary["cell"]) == 4
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr
