"""The GWTW selector and random binary search, driven from Python."""
import math

import pytest

import cdnlab


def test_gwtw_settles_on_the_winner_after_tau_outcomes_each():
    g = cdnlab.Gwtw([4, 9], tau=3, q=1.0, seed=1)
    value = {4: 0.0, 9: 1.0}
    events = []
    for step in range(3):
        assert g.in_trial and g.settled is None
        t = g.targets()
        assert sorted(t) == [4, 9]  # probe "all": every request to every candidate
        events += [g.observe(s, value[s]) for s in t]
    assert events[:-1] == [None] * 5 and events[-1] == ("settled", 9, 9)
    assert g.settled == 9 and g.targets() == [9]
    # A shortfall on the settled server starts a trial (q = 1: at once).
    assert g.observe(9, 0.0) == ("retrial", 9, 9)
    assert g.in_trial and sorted(g.targets()) == [4, 9]


def test_gwtw_round_robin_and_never_retrial():
    g = cdnlab.Gwtw([1, 2, 3], tau=2, probe="round-robin", retrial="never", seed=2)
    seen = []
    while g.settled is None:
        (s,) = g.targets()
        seen.append(s)
        g.observe(s, 1.0 if s == 2 else 0.5)
    assert sorted(seen) == [1, 1, 2, 2, 3, 3] and g.settled == 2
    assert all(g.observe(2, 0.0) is None for _ in range(50)) and g.settled == 2


def test_gwtw_bad_input():
    with pytest.raises(cdnlab.CdnlabError, match="tau"):
        cdnlab.Gwtw([1, 2], tau=0)
    with pytest.raises(cdnlab.CdnlabError, match="q"):
        cdnlab.Gwtw([1, 2], q=0.0)
    with pytest.raises(cdnlab.CdnlabError, match="probe rule"):
        cdnlab.Gwtw([1, 2], probe="some")
    with pytest.raises(cdnlab.CdnlabError, match="not a candidate"):
        cdnlab.Gwtw([1, 2]).observe(3, 1.0)
    with pytest.raises(cdnlab.CdnlabError, match="finite"):
        cdnlab.Gwtw([1, 2]).observe(1, math.nan)


def test_rbs_serves_each_used_index_uniformly():
    """n = 5 of k = 16 used: the served index is uniform on 1..5 (chi-square, 4 degrees of
    freedom, below 18.47, its 0.001 quantile, on fixed seeds) and the mean probe count is
    1 + H_16 - H_5 (within 4 standard errors). Always serving the highest used index, or
    probing past a hit, fails both."""
    k, n, trials = 16, 5, 20000
    counts = [0] * (n + 1)
    probes = []
    for seed in range(trials):
        served, p = cdnlab.rbs(k, lambda i: i <= n, seed=seed)
        counts[served] += 1
        probes.append(p)
    chi2 = sum((c - trials / n) ** 2 / (trials / n) for c in counts[1:])
    assert counts[0] == 0 and chi2 < 18.47, counts
    h = lambda m: sum(1 / j for j in range(1, m + 1))
    mean = sum(probes) / trials
    sd = math.sqrt(sum((p - mean) ** 2 for p in probes) / (trials - 1))
    assert abs(mean - (1 + h(k) - h(n))) < 4 * sd / math.sqrt(trials)


def test_rbs_search_step_by_step_is_the_same_search():
    for seed in range(200):
        s = cdnlab.RbsSearch(12, seed=seed)
        while True:
            i = s.next()
            if i is None or i <= 4:
                break
            s.missed()
        assert (i, s.probes) == cdnlab.rbs(12, lambda j: j <= 4, seed=seed)
    s = cdnlab.RbsSearch(3)
    with pytest.raises(cdnlab.CdnlabError, match="next"):
        s.missed()
    # Nothing anywhere: every index misses and the search ends.
    served, probes = cdnlab.rbs(6, lambda j: False)
    assert served is None and 1 <= probes <= 6
    with pytest.raises(ZeroDivisionError):
        cdnlab.rbs(6, lambda j: 1 / 0)


def test_the_type_stub_names_every_native_export():
    """python/cdnlab/_native.pyi declares exactly what the native module exports, so type
    checkers and editors see every class, method and function."""
    import ast
    from pathlib import Path

    stub = ast.parse((Path(cdnlab.__file__).parent / "_native.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    exported = {n for n in dir(cdnlab._native) if not n.startswith("_")}
    assert declared == exported
    for cls in [n for n in stub.body if isinstance(n, ast.ClassDef) and n.name != "CdnlabError"]:
        methods = {m.name for m in cls.body if isinstance(m, ast.FunctionDef)}
        methods |= {t.target.id for t in cls.body if isinstance(t, ast.AnnAssign)}
        public = {m for m in dir(getattr(cdnlab._native, cls.name)) if not m.startswith("_")}
        assert public <= methods, (cls.name, public - methods)


def test_the_type_stub_gives_each_native_function_its_parameters():
    """Each function of python/cdnlab/_native.pyi takes the native function's parameters, by
    name and in order (the stubs of `mrc` and `replay` once lacked `estimator`)."""
    import ast
    import inspect
    from pathlib import Path

    stub = ast.parse((Path(cdnlab.__file__).parent / "_native.pyi").read_text())
    for fn in [n for n in stub.body if isinstance(n, ast.FunctionDef)]:
        declared = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        native = list(inspect.signature(getattr(cdnlab._native, fn.name)).parameters)
        assert declared == native, fn.name
