"""cdnlab.replay and cdnlab.Cache against `cdnlab cache-replay --json` on the same traces."""
import json

import numpy as np
import pytest

import cdnlab

# Keys that are measurements of time or memory, which differ between any two runs.
TIMING = {"read_seconds", "sim_seconds", "mreq_per_s", "peak_rss_bytes", "trace"}


def cli_rows(cli, trace, policies, sizes, unit):
    _, out, _ = cli("cache-replay", "--trace", trace, "--policy", policies, "--size", sizes,
                    "--size-unit", unit, "--json", "--no-plot")
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("unit,trace_key", [("objects", "unit"), ("bytes", "sized")])
def test_every_policy_matches_the_command(cli, traces, unit, trace_key):
    trace = traces[trace_key]
    sizes = "0.001,0.01,0.1,500" if unit == "objects" else "0.01,0.1"
    want = cli_rows(cli, trace, "all", sizes, unit)
    got = cdnlab.replay(trace, "all", sizes, size_unit=unit, threads=1)
    assert list(got.columns) == cdnlab.REPLAY_COLUMNS
    assert len(got) == len(want) == len(cdnlab.policies()) * len(sizes.split(","))
    for (_, g), w in zip(got.iterrows(), want):
        for k in cdnlab.REPLAY_COLUMNS:
            if k in TIMING:
                continue
            gv, wv = g[k], w[k]
            if wv is None:
                assert gv is None or np.isnan(gv), (k, gv)
            else:
                assert gv == wv, (w["policy"], w["size"], k, gv, wv)
    assert got["miss_ratio"].between(0, 1).all()


def test_lists_and_strings_and_threads_give_the_same(traces):
    a = cdnlab.replay(traces["unit"], ["lru", "fifo"], [0.01, 0.1], threads=2)
    b = cdnlab.replay(traces["unit"], "lru,fifo", "0.01,0.1", threads=1)
    assert a["hits"].tolist() == b["hits"].tolist()
    assert a["policy"].tolist() == ["lru", "lru", "fifo", "fifo"]


def test_cache_object_matches_the_replay(traces, tmp_path):
    """The request-by-request Cache gives the replay's hits (ids and sizes read with numpy)."""
    rec = np.fromfile(traces["sized"], dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")]))
    rec = rec[:50000]
    for policy in ["lru", "s3fifo", "gdsf"]:
        c = cdnlab.Cache(policy, 2_000_000, unit="bytes")
        hits = sum(c.access(int(i), int(s)) for i, s in zip(rec["id"], rec["size"]))
        assert c.used <= 2_000_000 and len(c) > 0
        # The same requests through the file-based replay.
        prefix = tmp_path / "prefix.oracleGeneral"
        rec.tofile(prefix)
        assert hits == cdnlab.replay(prefix, policy, 2_000_000, size_unit="bytes")["hits"][0]


def test_belady_needs_and_uses_next_access():
    ids = [1, 2, 3, 1, 2, 3]
    nxt = [3, 4, 5, -1, -1, -1]
    c = cdnlab.Cache("belady", 2)
    hits = [c.access(i, 1, n) for i, n in zip(ids, nxt)]
    assert sum(hits) == 2  # the optimum at capacity 2 (LRU gets none)
    lru = cdnlab.Cache("lru", 2)
    assert sum(lru.access(i) for i in ids) == 0


def test_bad_input_raises_the_commands_message(cli, tmp_path, traces):
    """The command's message, where Python names its own argument (`sizes`, not `--size`)."""
    cases = [
        ({"policies": "lru,nope", "sizes": "0.1"}, ["--policy", "lru,nope", "--size", "0.1"]),
        ({"policies": "lru", "sizes": "0"}, ["--policy", "lru", "--size", "0"]),
        ({"policies": "lru", "sizes": "0.1", "size_unit": "pages"},
         ["--policy", "lru", "--size", "0.1", "--size-unit", "pages"]),
    ]
    for kwargs, flags in cases:
        code, _, err = cli("cache-replay", "--trace", traces["unit"], *flags, "--no-plot", check=False)
        assert code != 0
        with pytest.raises(cdnlab.CdnlabError) as e:
            cdnlab.replay(traces["unit"], **kwargs)
        assert err.strip().replace("error: --size `", "error: sizes `") == f"error: {e.value}"
    # A CSV file that is not oracleGeneral: the command's message, naming the flag to use.
    csv = tmp_path / "t.csv"
    csv.write_text("".join(f"{i},{i % 7}\n" for i in range(40)))
    code, _, err = cli("cache-replay", "--trace", csv, "--size", "2", "--no-plot", check=False)
    with pytest.raises(cdnlab.CdnlabError) as e:
        cdnlab.replay(csv, "lru", 2)
    assert code != 0 and err.strip() == f"error: {e.value}" and "--format csv" in str(e.value)
    # A missing file is an OSError with the command's message.
    code, _, err = cli("cache-replay", "--trace", tmp_path / "none", "--size", "2", "--no-plot", check=False)
    with pytest.raises(OSError) as e:
        cdnlab.replay(tmp_path / "none", "lru", 2)
    assert err.strip() == f"error: {e.value}"
    with pytest.raises(cdnlab.CdnlabError, match="threads 0"):
        cdnlab.replay(traces["unit"], "lru", 2, threads=0)
    with pytest.raises(cdnlab.CdnlabError, match="allowed"):
        cdnlab.Cache("nope", 10)
    with pytest.raises(cdnlab.CdnlabError, match="at least 1|>= 1"):
        cdnlab.Cache("lru", 0)


def test_byte_units_byte_ratios_and_warnings(traces):
    """Sizes with byte units make the replay count bytes; every row has the byte ratios; a
    policy that cannot cache at its size says so; errors name the Python argument."""
    df = cdnlab.replay(traces["sized"], ["lru", "fifo"], ["1MiB", "100KB"])
    assert (df["size_unit"] == "bytes").all()
    assert df["size"].tolist() == [1 << 20, 100_000, 1 << 20, 100_000]
    assert (df["hit_bytes"] + df["miss_bytes"] == df["bytes"]).all()
    assert np.allclose(df["byte_miss_ratio"], df["miss_bytes"] / df["bytes"])
    assert np.allclose(df["hit_ratio"] + df["miss_ratio"], 1.0)
    # The bigger cache misses fewer bytes.
    assert (df["byte_miss_ratio"][::2].values < df["byte_miss_ratio"][1::2].values).all()
    small = cdnlab.replay(traces["unit"], "s3fifo", [5])
    assert "cached nothing" in small["warnings"][0][0], small["warnings"][0]
    assert cdnlab.replay(traces["unit"], "lru", [500])["warnings"][0] == []
    with pytest.raises(cdnlab.CdnlabError, match=r"^sizes `1 XB`"):
        cdnlab.replay(traces["unit"], "lru", ["1 XB"])
    with pytest.raises(cdnlab.CdnlabError, match="byte unit"):
        cdnlab.replay(traces["unit"], "lru", ["1MiB"], size_unit="objects")


def test_admission_matches_the_command(cli, traces):
    """cdnlab.replay(admission=...) gives the command's rows for every admission policy."""
    for adm in ["second-hit", "bloom:5000", "size:2000", "prob:0.5"]:
        _, out, _ = cli("cache-replay", "--trace", traces["sized"], "--policy", "lru,s3fifo",
                        "--size", "0.01,0.1", "--size-unit", "bytes", "--admission", adm,
                        "--json", "--no-plot")
        want = [json.loads(line) for line in out.splitlines()]
        got = cdnlab.replay(traces["sized"], "lru,s3fifo", [0.01, 0.1], size_unit="bytes",
                            admission=adm)
        assert got["admission"].tolist() == [adm] * 4
        assert got["misses"].tolist() == [w["misses"] for w in want], adm
        assert got["miss_bytes"].tolist() == [w["miss_bytes"] for w in want], adm
    with pytest.raises(cdnlab.CdnlabError, match=r"^admission: .*second-hit"):
        cdnlab.replay(traces["unit"], "lru", [10], admission="bloom:0")


@pytest.mark.parametrize("args", [
    ["--sizes", "10,100,1000"],
    ["--sizes", "64KiB,1MiB,4MiB"],
    ["--size-unit", "bytes", "--sample", "0.5", "--exact-too"],
    ["--policy", "s3fifo", "--sizes", "200,1000,4000", "--sample", "0.5", "--exact-too"],
])
def test_mrc_matches_the_command(cli, traces, args):
    """cdnlab.mrc gives `cdnlab mrc --json`'s rows, in objects and in bytes, exact or sampled."""
    _, out, _ = cli("mrc", "--trace", traces["sized"], *args, "--json", "--no-plot")
    want = [json.loads(line) for line in out.splitlines()]
    kw = {}
    if "--sizes" in args:
        kw["sizes"] = args[args.index("--sizes") + 1]
    if "--size-unit" in args:
        kw["size_unit"] = "bytes"
    if "--sample" in args:
        kw["sample"], kw["exact_too"] = 0.5, True
    if "--policy" in args:
        kw["policy"] = args[args.index("--policy") + 1]
    got = cdnlab.mrc(traces["sized"], **kw)
    assert list(got.columns) == cdnlab.MRC_COLUMNS
    assert len(got) == len(want) > 2
    for (_, g), w in zip(got.iterrows(), want):
        assert set(w) == set(cdnlab.MRC_COLUMNS)
        for k in ["policy", "size", "size_unit", "miss_ratio", "byte_miss_ratio",
                  "exact_miss_ratio", "method", "requests"]:
            gv, wv = g[k], w[k]
            assert (gv is None or gv != gv) if wv is None else gv == wv, (k, gv, wv)
    if "--size-unit" in args or "KiB" in str(args):
        assert (got["size_unit"] == "bytes").all()
    assert got["byte_miss_ratio"].notna().all()
    # The curve falls as the cache grows.
    assert got["miss_ratio"].is_monotonic_decreasing


def test_miniature_simulation_from_python(traces):
    """A miniature replay: at rate 1 the full replay; at 0.5 the sample's counts; errors name
    Python's arguments, not the command's flags."""
    t = traces["sized"]
    full = cdnlab.replay(t, ["s3fifo"], [100, 1000])
    same = cdnlab.replay(t, ["s3fifo"], [100, 1000], sample=1.0)
    assert list(same["miss_ratio"]) == list(full["miss_ratio"])
    assert list(same["miniature_size"]) == [100, 1000] and (same["sample_rate"] == 1.0).all()
    half = cdnlab.replay(t, ["s3fifo"], [1000], sample=0.5)
    assert half["miniature_size"][0] == 500 and half["requests"][0] < full["requests"][0]
    assert full["sample_rate"].isna().all()
    with pytest.raises(cdnlab.CdnlabError, match=r"^sample 2: .*above 0, at most 1"):
        cdnlab.replay(t, ["lru"], [100], sample=2)
    with pytest.raises(cdnlab.CdnlabError, match=r"^sample and sample_size: give one"):
        cdnlab.replay(t, ["lru"], [100], sample=0.5, sample_size=10)
    with pytest.raises(cdnlab.CdnlabError, match=r"^exact_too .*give sample or sample_size"):
        cdnlab.mrc(t, policy="s3fifo", exact_too=True)
    with pytest.raises(cdnlab.CdnlabError, match=r"^sample_size 0: at least 1"):
        cdnlab.mrc(t, sample_size=0)
    # A seed draws another sample; 0 is the default one; without a sample it is refused.
    plain = cdnlab.mrc(t, sizes=[200, 1000], sample=0.5)
    assert (plain["sample_seed"] == 0).all()
    assert list(cdnlab.mrc(t, sizes=[200, 1000], sample=0.5, sample_seed=0)["miss_ratio"]) == \
        list(plain["miss_ratio"])
    other = cdnlab.mrc(t, sizes=[200, 1000], sample=0.5, sample_seed=4)
    assert (other["sample_seed"] == 4).all()
    assert list(other["miss_ratio"]) != list(plain["miss_ratio"])
    seeded = cdnlab.replay(t, ["s3fifo"], [1000], sample=0.5, sample_seed=4)
    assert seeded["sample_seed"][0] == 4 and seeded["requests"][0] != half["requests"][0]
    with pytest.raises(cdnlab.CdnlabError, match=r"^sample_seed 2: .*give sample or sample_size"):
        cdnlab.replay(t, ["lru"], [100], sample_seed=2)
    with pytest.raises(cdnlab.CdnlabError, match=r"^sample_seed 2: .*give sample or sample_size"):
        cdnlab.mrc(t, sample_seed=2)
    # The strata estimator: exact at rate 1, as the command gives it; errors name arguments.
    strata = cdnlab.replay(t, ["s3fifo"], [100, 1000], sample=1.0, estimator="strata")
    assert list(strata["miss_ratio"]) == list(full["miss_ratio"])
    curve = cdnlab.mrc(t, sizes=[200, 1000], policy="fifo", sample=0.5, estimator="strata")
    assert curve["method"][0].endswith("strata")
    with pytest.raises(cdnlab.CdnlabError, match=r"^estimator: .*adj, strata"):
        cdnlab.replay(t, ["lru"], [100], sample=0.5, estimator="best")
    with pytest.raises(cdnlab.CdnlabError, match=r"^estimator strata .*give sample or sample_size"):
        cdnlab.replay(t, ["lru"], [100], estimator="strata")
    with pytest.raises(cdnlab.CdnlabError, match=r"^estimator strata: .*SHARDS.*replay"):
        cdnlab.mrc(t, sample=0.5, estimator="strata")
    with pytest.raises(cdnlab.CdnlabError, match=r"^estimator strata .*give sample or sample_size"):
        cdnlab.mrc(t, policy="fifo", estimator="strata")


def test_ttls_from_python(traces):
    """A TTL in seconds or as a rule string gives the command's rows; stale requests are counted
    in `expired` and in the misses; a bad rule names `ttl`."""
    t = traces["sized"]
    plain = cdnlab.replay(t, ["lru"], [1000])
    by_int = cdnlab.replay(t, ["lru"], [1000], ttl=50)
    by_str = cdnlab.replay(t, ["lru"], [1000], ttl="50s")
    assert list(by_int["hits"]) == list(by_str["hits"]) and by_int["ttl"][0] == "50"
    assert by_int["expired"][0] > 0 and plain["expired"][0] == 0 and plain["ttl"][0] == "none"
    # The eviction policy sees the same requests: a TTL only turns hits into revalidations.
    assert by_int["hits"][0] + by_int["expired"][0] == plain["hits"][0]
    assert by_int["misses"][0] == by_int["requests"][0] - by_int["hits"][0]
    with pytest.raises(cdnlab.CdnlabError, match=r"^ttl: .*allowed"):
        cdnlab.replay(t, ["lru"], [1000], ttl="soon")
    with pytest.raises(cdnlab.CdnlabError, match=r"^ttl: .*allowed"):
        cdnlab.replay(t, ["lru"], [1000], ttl=1.5)


@pytest.mark.parametrize("route", ["hash", "random"])
def test_hierarchy_matches_the_command(cli, traces, route):
    """cdnlab.hierarchy gives `cdnlab cache-hierarchy --json`'s rows; the tiers add up."""
    t = traces["sized"]
    _, out, _ = cli("cache-hierarchy", "--trace", t, "--edges", "3", "--route", route,
                    "--edge-size", "200", "--parent-size", "500,2000", "--json", "--no-plot")
    want = [json.loads(line) for line in out.splitlines()]
    got = cdnlab.hierarchy(t, 200, [500, 2000], edges=3, route=route)
    assert list(got.columns) == cdnlab.HIERARCHY_COLUMNS and len(got) == len(want) == 12
    for (_, g), w in zip(got.iterrows(), want):
        for k in ["parent_size", "tier", "requests", "hits", "hit_bytes", "served_share"]:
            assert g[k] == w[k], (k, g[k], w[k])
    for size, part in got.groupby("parent_size"):
        served = part.set_index("tier")["served_share"]
        assert abs(served["edges"] + served["parent"] + served["origin"] - 1) < 1e-12
    with pytest.raises(cdnlab.CdnlabError, match=r"^route `dns`"):
        cdnlab.hierarchy(t, 200, [500], route="dns")
    with pytest.raises(cdnlab.CdnlabError, match=r"^route client:3: .*CSV"):
        cdnlab.hierarchy(t, 200, [500], route="client:3")
    with pytest.raises(cdnlab.CdnlabError, match=r"^edges 0: at least 1"):
        cdnlab.hierarchy(t, 200, [500], edges=0)


def test_hierarchy_by_client_field_matches_the_command(cli, tmp_path):
    """route="client:COL" with a CSV trace read through the csv_* arguments: the command's rows."""
    f = tmp_path / "c.csv"
    f.write_text("t;obj;bytes;who\n" + "".join(
        f"{i};{(i * 31) % 97};{1 + i % 40};client-{i % 7}\n" for i in range(3000)))
    flags = ["--format", "csv", "--csv-header", "--csv-delimiter", ";", "--csv-id", "2",
             "--csv-size", "3", "--csv-time", "1"]
    _, out, _ = cli("cache-hierarchy", "--trace", f, *flags, "--edges", "4", "--route", "client:4",
                    "--edge-size", "10", "--parent-size", "30", "--json", "--no-plot")
    want = [json.loads(line) for line in out.splitlines()]
    got = cdnlab.hierarchy(f, 10, [30], edges=4, route="client:4", format="csv", csv_header=True,
                           csv_delimiter=";", csv_id=2, csv_size=3, csv_time=1)
    assert len(got) == len(want) == 7
    for (_, g), w in zip(got.iterrows(), want):
        for k in ["tier", "requests", "hits", "hit_bytes"]:
            assert g[k] == w[k], (k, g[k], w[k])
