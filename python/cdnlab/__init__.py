"""cdnlab from Python: CDN server selection and load balancing.

Every function calls the same Rust code as the ``cdnlab`` command, so it gives the same
numbers and the same error messages. Tables come back as pandas DataFrames when pandas is
installed, otherwise as dicts of numpy arrays (column name -> array).

- :func:`replay`: replay a trace through cache policies at several sizes (``cdnlab cache-replay``);
  :func:`hierarchy` through edges and a parent; :func:`mrc`, a miss-ratio curve.
- :func:`gen_trace`, :func:`trace_stats`: write a synthetic trace; characterise one.
- :class:`Cache`: one cache driven request by request.
- :func:`tp_solve`: the Transportation Problem (optimal, north-west corner, Vogel), with duals and
  a warm re-solve; :func:`erlang_b`.
- :func:`run`, :func:`experiments`, :func:`reproduce`: scenarios, the experiment registry and
  the papers' claims; :func:`merge` and :func:`plot` for a run's folders.
- :class:`Gwtw`, :class:`RbsSearch`, :func:`rbs`: Go-With-The-Winner and random binary search
  for your own models.

Long calls release the GIL and stop on Ctrl-C (raising ``KeyboardInterrupt``).
"""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import Cache, CdnlabError, Gwtw, RbsSearch, erlang_b

__all__ = [
    "Cache",
    "CdnlabError",
    "Gwtw",
    "RbsSearch",
    "RunResult",
    "TpResult",
    "erlang_b",
    "experiments",
    "gen_trace",
    "hierarchy",
    "merge",
    "mrc",
    "plot",
    "policies",
    "rbs",
    "replay",
    "reproduce",
    "reproductions",
    "run",
    "tp_solve",
    "trace_stats",
]

__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]

#: Columns of :func:`replay`, in order: the keys of ``cdnlab cache-replay --json``.
REPLAY_COLUMNS = list(_native.replay_columns())

#: Columns of :func:`mrc`, in order: the keys of ``cdnlab mrc --json``.
MRC_COLUMNS = list(_native.mrc_columns())

#: Columns of :func:`hierarchy`, in order: the keys of ``cdnlab cache-hierarchy --json``.
HIERARCHY_COLUMNS = list(_native.hierarchy_columns())

#: Columns of :func:`reproduce`, in order: the keys of a claim in claims.json.
CLAIM_COLUMNS = [
    "id", "paper", "kind", "claim", "measured", "in_words", "expected", "pass", "note", "rules",
]


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


def _column(values: list) -> np.ndarray:
    """A numpy column: numbers as int64 or float64 (None as NaN), anything else as objects."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return np.array(values, dtype=bool)
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        if len(present) == len(values) and all(isinstance(v, int) for v in present):
            # Seeds are 64-bit unsigned (as pandas reads them: uint64).
            big = any(v >= 2**63 for v in present) and min(present) >= 0
            return np.array(values, dtype=np.uint64 if big else np.int64)
        return np.array([math.nan if v is None else v for v in values], dtype=np.float64)
    return np.array(values, dtype=object)


def _table(records: List[Mapping[str, Any]], columns: Sequence[str]):
    """Records as a DataFrame (pandas) or a dict of numpy arrays."""
    pd = _pandas()
    if pd is not None:
        return pd.DataFrame.from_records(list(records), columns=list(columns))
    return {c: _column([r.get(c) for r in records]) for c in columns}


def _read_csv(path: Path):
    """A results or summary file as a DataFrame (pandas) or a dict of numpy arrays."""
    pd = _pandas()
    if pd is not None:
        return pd.read_csv(path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]

    def parse(s: str):
        for cast in (int, float):
            try:
                return cast(s)
            except ValueError:
                pass
        return None if s == "" else s

    return {h: _column([parse(r[i]) for r in body]) for i, h in enumerate(head)}


def _listish(v: Union[str, Iterable[Any]]) -> List[Any]:
    """A list as given, one value as a list of one, a string as its comma-separated items."""
    if isinstance(v, str):
        return v.split(",")
    if isinstance(v, (int, float)):
        return [v]
    return list(v)


def policies() -> List[str]:
    """Every cache policy name, in the order ``policies="all"`` runs them."""
    return list(_native.policies())


def replay(
    trace: PathLike,
    policies: Union[str, Sequence[str]] = "lru",
    sizes: Union[str, float, Sequence[Union[float, str]]] = (0.01, 0.1),
    size_unit: Optional[str] = None,
    format: str = "oracle-general",
    threads: Optional[int] = None,
    *,
    csv_id: int = 1,
    csv_size: Optional[int] = None,
    csv_time: Optional[int] = None,
    csv_header: bool = False,
    csv_delimiter: str = ",",
    csv_id_text: bool = False,
    admission: str = "all",
    sample: Optional[float] = None,
    sample_size: Optional[int] = None,
    ttl: Optional[Union[int, str]] = None,
    csv_ttl: Optional[int] = None,
    sample_seed: int = 0,
    estimator: str = "adj",
):
    """Replays a trace through every (policy, size), as ``cdnlab cache-replay`` does.

    ``trace`` is an oracleGeneral, CSV or text file, zstd-compressed or not. ``policies`` is a
    list of names or ``"all"`` (see :func:`policies`). A size below 1 is a fraction of the
    trace's working set (distinct objects, or their bytes with ``size_unit="bytes"``); 1 or
    more is an absolute capacity; a string with a byte unit (``"64MiB"``, ``"1GB"``: KB, MB, GB
    powers of 1000, KiB, MiB, GiB of 1024) is bytes, and makes ``size_unit`` default to
    ``"bytes"`` (else it defaults to ``"objects"``). Returns one row per (policy, size), in
    that order, with the columns :data:`REPLAY_COLUMNS` (``policy``, ``size``, ``requests``,
    ``hits``, ``miss_ratio``, ``byte_miss_ratio``, ..., ``warnings``: a list, empty unless
    the cache cached nothing or never filled). ``admission`` puts an admission policy in front
    of every eviction policy: ``"all"``, ``"second-hit"``, ``"bloom:N"`` (second-hit in Bloom
    filters), ``"size:N"`` (objects smaller than N bytes, e.g. ``"size:1MiB"``),
    ``"prob:P"`` or ``"adaptsize"``. ``sample`` (a share of the objects) or
    ``sample_size`` (a number of them) makes it a miniature simulation: only the sampled
    objects' requests, each cache scaled by the rate (``sample_rate``, ``miniature_size``); the
    counts are then the sample's and the ratios estimate the whole trace's; ``sample_seed``
    picks which objects the sample draws (0, the default, is one fixed sample);
    ``estimator="strata"`` weighs the miniature's misses by popularity class after a first
    pass that counts every object, and scales each cache by the share of objects drawn: about
    half the error of the default ``"adj"`` at the same rate. ``ttl`` makes
    objects expire: seconds (``3600``), a duration (``"1h"``), size classes
    (``"64KiB:1h,1GiB:6h,1d"``) or ``"trace"`` (each request's TTL: twr's field, or the CSV
    column ``csv_ttl``); a request that finds its object stale is a miss, counted in
    ``expired`` too, and the copy is refreshed in place (``ttl=0``: every request for a stored
    object revalidates; 0 in a trace's TTL field: never expires). Results do not depend on
    ``threads``.

    >>> df = cdnlab.replay("t.oracleGeneral", ["lru", "s3fifo"], [0.001, 0.01, 0.1])
    >>> df = cdnlab.replay("cdn.oracleGeneral", "lru", ["64MiB", "1GiB"])
    """
    out = _native.replay(
        os.fspath(trace), _listish(policies), _listish(sizes), size_unit, format, threads,
        csv_id, csv_size, csv_time, csv_header, csv_delimiter, csv_id_text, admission, sample,
        sample_size, ttl, csv_ttl, sample_seed, estimator,
    )
    return _table(out, REPLAY_COLUMNS)


def hierarchy(
    trace: PathLike,
    edge_size: Union[int, float, str],
    parent_sizes: Union[int, float, str, Sequence[Union[int, float, str]]],
    edges: int = 4,
    route: str = "hash",
    edge_policy: str = "lru",
    parent_policy: str = "lru",
    edge_admission: str = "all",
    parent_admission: str = "all",
    size_unit: Optional[str] = None,
    ttl: Optional[Union[int, str]] = None,
    format: str = "oracle-general",
    threads: Optional[int] = None,
    csv_id: int = 1,
    csv_size: Optional[int] = None,
    csv_time: Optional[int] = None,
    csv_header: bool = False,
    csv_delimiter: str = ",",
    csv_id_text: bool = False,
    csv_ttl: Optional[int] = None,
):
    """A two-tier replay, as ``cdnlab cache-hierarchy`` does it: each request goes to one of
    ``edges`` edge caches by ``route`` (``"hash"`` of the object id, ``"modulo"``,
    ``"random"`` per request, or ``"client:COL"``: by a hash of column COL of a CSV trace, so
    each client has one edge); the ``csv_*`` arguments read a CSV trace as :func:`replay`'s do.
    An edge's misses go to one parent cache, the parent's to the
    origin. Sizes read as :func:`replay`'s; one configuration per parent size. Returns one row
    per (parent size, tier: ``edges``, ``edge-0``..., ``parent``, ``origin``) with the columns
    :data:`HIERARCHY_COLUMNS` (requests reaching the tier, hits, hit and byte hit ratios, and
    ``served_share``/``served_byte_share``: the shares of all requests and bytes it served).

    >>> df = cdnlab.hierarchy("t.oracleGeneral", 0.01, [0.01, 0.05, 0.1], edges=4)
    """
    out = _native.hierarchy(
        os.fspath(trace), edge_size, _listish(parent_sizes), edges, route, edge_policy,
        parent_policy, edge_admission, parent_admission, size_unit, ttl, format, threads,
        csv_id, csv_size, csv_time, csv_header, csv_delimiter, csv_id_text, csv_ttl,
    )
    return _table(out, HIERARCHY_COLUMNS)


def mrc(
    trace: PathLike,
    sizes: Optional[Union[str, Sequence[Union[int, str]]]] = None,
    size_unit: Optional[str] = None,
    sample: Optional[float] = None,
    sample_size: Optional[int] = None,
    exact_too: bool = False,
    format: str = "oracle-general",
    policy: str = "lru",
    replay: bool = False,
    threads: Optional[int] = None,
    sample_seed: int = 0,
    estimator: str = "adj",
):
    """A miss-ratio curve, as ``cdnlab mrc`` computes it: LRU's in one pass, any policy's by
    replays.

    ``sizes`` are capacities in ``size_unit`` (objects by default), or byte sizes with a unit
    (``"64MiB"``), which make the curve count bytes; without them, 40 sizes from 1 to the
    trace's distinct objects (or, in bytes, from its largest object to its working set). Each
    row has ``byte_miss_ratio`` too (missed bytes over bytes requested), whatever the unit. ``sample`` estimates the curve by
    SHARDS at that rate, ``sample_size`` by fixed-size SHARDS (objects only); ``exact_too``
    computes the exact curve in the same pass (``exact_miss_ratio``). Any other ``policy``
    (or LRU with ``replay=True``) is replayed at every size: in full, or with ``sample`` or
    ``sample_size`` as a miniature simulation (the sampled objects' requests, each cache scaled
    by the rate), and ``exact_too`` adds the full replays, timed apart (``exact_seconds``).
    ``sample_seed`` picks which objects a sample draws (0, the default, is one fixed sample):
    curves from several seeds show how much the estimate moves with the sample.
    ``estimator="strata"`` (miniature simulations only) weighs the misses by popularity class
    after a first pass that counts every object: about half the error of ``"adj"``. Returns one
    row per size with the columns :data:`MRC_COLUMNS`.

    >>> df = cdnlab.mrc("cdn.oracleGeneral", ["64MiB", "1GiB", "16GiB"])
    >>> df = cdnlab.mrc("t.oracleGeneral", policy="s3fifo", sample=0.1, exact_too=True)
    """
    out = _native.mrc(
        os.fspath(trace), None if sizes is None else _listish(sizes), size_unit, sample,
        sample_size, exact_too, format, policy, replay, threads, sample_seed, estimator,
    )
    return _table(out, MRC_COLUMNS)


def gen_trace(
    out: PathLike,
    objects: int = 1_000_000,
    requests: int = 10_000_000,
    alpha: float = 0.8,
    size: int = 1,
    max_size: Optional[int] = None,
    seed: int = 1,
) -> Path:
    """Writes a synthetic Zipf trace in oracleGeneral format, as ``cdnlab gen-trace`` does:
    ``requests`` requests over ``objects`` objects (id 0 the most popular; ``alpha`` 0 is
    uniform), each object ``size`` bytes, or, with ``max_size``, of a size drawn once per object,
    log-uniform between the two. The file is written whole or not at all; the same seed gives
    the same file. Returns its path.

    >>> t = cdnlab.gen_trace("t.oracleGeneral", objects=10_000, requests=1_000_000, max_size=4096)
    """
    _native.gen_trace(os.fspath(out), objects, requests, alpha, size, max_size, seed)
    return Path(out)


def trace_stats(
    trace: PathLike, format: str = "oracle-general", plot_dir: Optional[PathLike] = None
) -> dict:
    """Characterises a trace, as ``cdnlab trace-stats --json`` does: a dict with ``requests``,
    ``objects``, ``bytes_requested``, ``working_set_bytes``, the one-hit wonders, request and
    object size quantiles, the Zipf fit (``zipf``: ``alpha``, ``r2``, ``ranks``), and the reuse and
    inter-arrival histograms. With ``plot_dir``, its figures (popularity, reuse, sizes) are
    drawn there as SVG and PNG.

    >>> s = cdnlab.trace_stats("t.oracleGeneral")
    >>> s["zipf"]["alpha"], s["one_hit_share_objects"]
    """
    text = _native.trace_stats(
        os.fspath(trace), format, None if plot_dir is None else os.fspath(plot_dir)
    )
    return json.loads(text)


def _numbers(x: Any, name: str, ndim: int) -> np.ndarray:
    """``x`` as a numpy array of ``ndim`` dimensions of finite numbers (integers or floats)."""
    a = np.asarray(x)
    if a.ndim != ndim:
        shape = "a list or 1-d array" if ndim == 1 else "a 2-d array (supply by demand)"
        raise CdnlabError(f"{name}: {a.ndim}-d input; allowed {shape}")
    if a.dtype.kind not in "iuf":
        raise CdnlabError(f"{name}: {a.dtype} values; allowed numbers")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise CdnlabError(f"{name}: NaN or infinite values; allowed finite numbers")
    return a


def _whole(a: np.ndarray) -> bool:
    return a.dtype.kind in "iu" or bool(np.all(a == np.round(a)))


def _ints(a: np.ndarray, name: str) -> np.ndarray:
    """Whole numbers as C-contiguous little-endian int64."""
    if a.size and a.dtype.kind in "uf" and (a.max() >= 2.0**63 or a.min() < -(2.0**63)):
        raise CdnlabError(f"{name}: values beyond 64-bit integers; allowed whole numbers up to 2^31")
    return np.ascontiguousarray(a, dtype="<i8")


#: The solver's limits: totals of at most 2^30 - 1, costs of at most 2^31 in absolute value.
_MASS_UNITS = 2**30 - 1
_COST_UNITS = 2**31


def _power_of_two_scale(top: float, units: int) -> float:
    """The largest power of two that keeps ``top`` within ``units``: scaling by it is exact in
    floating point, and binary fractions (0.5, 0.25, ...) stay exact; ``top`` then lands in
    (units / 2, units], so a unit is at most 2 / units of it."""
    return math.ldexp(1.0, math.floor(math.log2(units / top)))


def _round_to(x: np.ndarray, total: int) -> np.ndarray:
    """Non-negative reals rounded to integers summing to ``total`` (largest remainders)."""
    low = np.floor(x).astype(np.int64)
    short = int(total - low.sum())
    if short > 0:
        low[np.argsort(-(x - low), kind="stable")[:short]] += 1
    elif short < 0:
        low[np.argsort(x - low, kind="stable")[: -short]] -= 1
    return np.maximum(low, 0)


class _Scale:
    """How a float instance was made whole: masses times ``mass``, costs times ``cost``."""

    def __init__(self, mass: float, cost: float, costs: np.ndarray):
        self.mass, self.cost, self.costs = mass, cost, costs

    @staticmethod
    def masses(s: np.ndarray, d: np.ndarray, balance: Optional[str]):
        """The two sides in integer units: equal totals (within 10^-9 of the larger, as float
        sums drift) are rounded to one integer total, so the instance stays balanced."""
        ts, td = float(s.sum()), float(d.sum())
        top = max(ts, td)
        if top <= 0:
            raise CdnlabError("supply and demand: all zero; allowed a positive total")
        mass = _power_of_two_scale(top, _MASS_UNITS)
        if abs(ts - td) <= 1e-9 * top:
            t = int(round(ts * mass))
            return _round_to(s * mass, t), _round_to(d * mass, t), mass
        if balance is None:
            raise CdnlabError(
                f"demand: total {td!r} differs from total supply {ts!r} (pass balance='scale' "
                "or balance='dummy')"
            )
        return (_round_to(s * mass, int(round(ts * mass))),
                _round_to(d * mass, int(round(td * mass))), mass)


class TpResult:
    """A solved Transportation Problem: ``cost``, ``flows`` (an (k, 3) array of positive flows
    ``i, j, x``), ``matrix`` (the flows, one row per supply and one column per demand of the
    solved instance), ``dummy`` (which row or column ``balance='dummy'`` added, if any), duals
    ``u`` and ``v`` (optimal method only), ``pivots``, ``seconds`` and :meth:`resolve` for a
    warm re-allocation. An instance with fractional values gives float flows, cost and duals
    (see :func:`tp_solve`)."""

    def __init__(self, native: Any, shape: Tuple[int, int], scale: Optional[_Scale] = None):
        self._native = native
        self._shape = shape
        self._scale = scale

    @property
    def cost(self) -> Union[int, float]:
        if self._scale is None:
            return self._native.cost
        # The plan's cost at the given (unrounded) costs; the dummy's cells cost 0.
        f = self.flows
        m, n = self._shape
        real = (f[:, 0] < m) & (f[:, 1] < n)
        i, j = f[real, 0].astype(np.int64), f[real, 1].astype(np.int64)
        return float(np.sum(f[real, 2] * self._scale.costs[i, j]))

    @property
    def flows(self) -> np.ndarray:
        f = np.array(self._native.flows, dtype=np.int64).reshape(-1, 3)
        if self._scale is None:
            return f
        out = f.astype(np.float64)
        out[:, 2] /= self._scale.mass
        return out

    @property
    def matrix(self) -> np.ndarray:
        f = self.flows
        m = np.zeros((self._native.rows, self._native.cols), dtype=f.dtype)
        m[f[:, 0].astype(np.int64), f[:, 1].astype(np.int64)] = f[:, 2]
        return m

    @property
    def dummy(self) -> Optional[Tuple[str, int]]:
        """``("row", i)`` or ``("column", j)``: the dummy supply or demand that
        ``balance='dummy'`` added (cost 0; it takes the difference of the totals), else None."""
        m, n = self._shape
        if self._native.rows > m:
            return ("row", m)
        if self._native.cols > n:
            return ("column", n)
        return None

    def _duals(self, x: Optional[List[int]]) -> Optional[np.ndarray]:
        if x is None:
            return None
        a = np.array(x, dtype=np.int64)
        return a if self._scale is None else a / self._scale.cost

    @property
    def u(self) -> Optional[np.ndarray]:
        return self._duals(self._native.u)

    @property
    def v(self) -> Optional[np.ndarray]:
        return self._duals(self._native.v)

    @property
    def pivots(self) -> Optional[int]:
        return self._native.pivots

    @property
    def seconds(self) -> float:
        return self._native.seconds

    @property
    def supply(self) -> np.ndarray:
        """The supplies of the instance solved (after balancing), in the caller's units."""
        a = np.array(self._native.supply, dtype=np.int64)
        return a if self._scale is None else a / self._scale.mass

    @property
    def demand(self) -> np.ndarray:
        a = np.array(self._native.demand, dtype=np.int64)
        return a if self._scale is None else a / self._scale.mass

    def resolve(self, supply: Any = None, demand: Any = None, balance: Optional[str] = None) -> "TpResult":
        """Re-solves with new supplies and/or demands (same shape and costs), warm from this
        optimum's basis."""
        m, n = self._shape
        s = None if supply is None else _numbers(supply, "supply", 1)
        d = None if demand is None else _numbers(demand, "demand", 1)
        fractional = any(a is not None and not _whole(a) for a in (s, d))
        if self._scale is None and not fractional:
            sb = None if s is None else _ints(s, "supply").tobytes()
            db = None if d is None else _ints(d, "demand").tobytes()
            return TpResult(self._native.resolve(sb, db, balance), self._shape)
        # In the scaled units: new masses get a new mass factor (the basis is a set of cells,
        # valid at any scale); the costs keep theirs.
        if self._scale is None:
            raise CdnlabError(
                "supply or demand: fractional values for an instance solved in whole numbers; "
                "solve it with fractional values to re-solve with them"
            )
        old = self.supply[:m], self.demand[:n]
        s = old[0] if s is None else s.astype(np.float64)
        d = old[1] if d is None else d.astype(np.float64)
        si, di, mass = _Scale.masses(s, d, balance)
        native = self._native.resolve(
            _ints(si, "supply").tobytes(), _ints(di, "demand").tobytes(), balance
        )
        return TpResult(native, self._shape, _Scale(mass, self._scale.cost, self._scale.costs))

    def __repr__(self) -> str:
        return f"TpResult(cost={self.cost}, {self._native.rows} x {self._native.cols}, {len(self._native.flows)} flows)"


def tp_solve(supply: Any, demand: Any, cost: Any, balance: Optional[str] = None, method: str = "optimal") -> TpResult:
    """Solves the Transportation Problem min sum c_ij x_ij with row sums ``supply`` and column
    sums ``demand`` (lists or numpy arrays; ``cost`` is supply by demand).

    Unequal totals raise :class:`CdnlabError` unless ``balance`` is ``"scale"`` (demands scaled
    to the total supply) or ``"dummy"`` (a dummy row or column of cost 0, named by
    :attr:`TpResult.dummy`). ``method`` is ``"optimal"`` (network simplex, with duals),
    ``"northwest"`` or ``"vogel"``.

    Whole numbers are solved exactly. Fractional values (POT-style histograms, ``[0.5, 0.5]``)
    are solved exactly in integers after scaling by powers of two: the masses so that their
    larger total lies in (2^29, 2^30 - 1], the solver's limit (each rounded to a unit of at most
    2^-29 of the total, by largest remainders so that equal totals stay equal; totals within
    10^-9 of each other count as equal), the costs, when fractional, so that the largest lies in
    (2^30, 2^31] (a unit of at most 2^-30 of it). Binary fractions (0.5, 0.25, ...) are exact.
    The flows, duals and cost come back as floats in the caller's units; the plan is optimal
    for the rounded instance, so its cost is within about (2^-29 + 2^-31) x total x max|cost|
    of the true optimum.

    >>> r = cdnlab.tp_solve([5, 5], [4, 6], [[1, 2], [3, 1]])
    >>> r.cost, r.matrix
    >>> cdnlab.tp_solve([0.5, 0.5], [0.25, 0.75], [[0.0, 1.0], [1.0, 0.0]]).cost
    0.25
    """
    s = _numbers(supply, "supply", 1)
    d = _numbers(demand, "demand", 1)
    c = _numbers(cost, "cost", 2)
    if c.shape != (len(s), len(d)):
        raise CdnlabError(
            f"cost: shape {c.shape}; allowed {len(s)} x {len(d)} (supplies by demands)"
        )
    shape = (len(s), len(d))
    if _whole(s) and _whole(d) and _whole(c):
        native = _native.tp_solve(
            _ints(s, "supply").tobytes(), _ints(d, "demand").tobytes(), _ints(c, "cost").tobytes(),
            balance, method,
        )
        return TpResult(native, shape)
    for a, name in ((s, "supply"), (d, "demand")):
        if a.size and a.min() < 0:
            raise CdnlabError(f"{name}: negative values; allowed numbers of at least 0")
    si, di, mass = _Scale.masses(s.astype(np.float64), d.astype(np.float64), balance)
    costs = c.astype(np.float64)
    if _whole(c) and (c.size == 0 or np.abs(c).max() <= 2**31):
        ci, cscale = c, 1.0
    else:
        top = float(np.abs(costs).max())
        cscale = _power_of_two_scale(top, _COST_UNITS) if top > 0 else 1.0
        ci = np.round(costs * cscale)
    native = _native.tp_solve(
        _ints(si, "supply").tobytes(), _ints(di, "demand").tobytes(),
        _ints(np.asarray(ci), "cost").tobytes(), balance, method,
    )
    return TpResult(native, shape, _Scale(mass, cscale, costs))


class RunResult:
    """A scenario run: ``results`` (one row per replication), ``summary`` (one row per cell:
    mean, sd and 95 % half-width per metric) and ``out`` (the output folder, or None when it
    was a temporary one)."""

    def __init__(self, results: Any, summary: Any, out: Optional[Path], cells_run: int):
        self.results = results
        self.summary = summary
        self.out = out
        self.cells_run = cells_run

    def __repr__(self) -> str:
        n = len(self.summary) if _pandas() is not None else len(next(iter(self.summary.values())))
        return f"RunResult({n} cells, out={self.out})"


def run(
    scenario: Union[PathLike, Mapping[str, Any]],
    threads: Optional[int] = None,
    out: Optional[PathLike] = None,
    *,
    shard: Optional[str] = None,
    resume: bool = False,
    progress: bool = False,
) -> RunResult:
    """Runs a scenario as ``cdnlab run`` does: a path to a TOML file, or the same as a dict
    (``{"experiment": "gwtw-web", "replications": 3, "grid": {...}}``).

    With ``out=None`` the output goes to a temporary folder, removed once the tables are read;
    give ``out`` to keep the files (results.csv, summary.csv, plots) and to ``resume``.
    Results are a function of (scenario, seed), whatever ``threads``.
    """
    if isinstance(scenario, Mapping):
        text, name = _native.scenario_toml(scenario), None
    else:
        path = Path(scenario)
        try:
            text = path.read_text()
        except OSError as e:
            raise OSError(f"{path}: {e.strerror or e}") from None
        name = str(path)

    def go(folder: Path) -> RunResult:
        cells = _native.run_scenario(text, name, str(folder), threads, shard, resume, progress)
        return RunResult(
            _read_csv(folder / "results.csv"), _read_csv(folder / "summary.csv"),
            None if out is None else folder, cells,
        )

    if out is not None:
        return go(Path(out))
    with tempfile.TemporaryDirectory(prefix="cdnlab-run-") as tmp:
        return go(Path(tmp))


def merge(dirs: Sequence[PathLike], out: PathLike) -> int:
    """Combines the output folders of ``run(..., shard="i/n")`` (or ``cdnlab run --shard``)
    into ``out``, as ``cdnlab merge`` does; the folders must hold shards of one scenario.
    Returns the number of cells merged. Read the result with ``run(scenario, out=out,
    resume=True)``, which runs nothing more."""
    if isinstance(dirs, (str, os.PathLike)):
        dirs = [dirs]
    return _native.merge([os.fspath(d) for d in dirs], os.fspath(out))


def plot(
    dir: PathLike,
    x: Optional[str] = None,
    y: Optional[Union[str, Sequence[str]]] = None,
    series: Optional[str] = None,
    where: Optional[Union[Mapping[str, Any], Sequence[str]]] = None,
    log_x: bool = False,
    log_y: bool = False,
    title: Optional[str] = None,
    y_label: Optional[str] = None,
    format: str = "both",
    scale: float = 2.0,
    out: Optional[PathLike] = None,
    name: str = "plot",
) -> List[Path]:
    """Re-draws a finished run's figures without running it, as ``cdnlab plot`` does: the
    scenario's plots, or, with ``x`` (a swept parameter) and ``y`` (metrics), one new plot with a
    line per value of ``series`` and the other parameters fixed by ``where`` (a dict, or
    ``"NAME=VALUE"`` strings). ``format`` is ``"svg"``, ``"png"`` or ``"both"``; ``scale`` the
    PNG's size as a multiple of 760 x 480 px (1 to 8). Returns the files written.

    >>> cdnlab.plot("out/che", x="alpha", y=["hit_ratio", "che_hit_ratio"], series="cache_size")
    """
    ys = [] if y is None else _listish(y)
    if isinstance(where, Mapping):
        filt = [f"{k}={v}" for k, v in where.items()]
    elif where is None:
        filt = []
    else:
        filt = [where] if isinstance(where, str) else list(where)
    written = _native.plot(
        os.fspath(dir), x, ys, series, filt, log_x, log_y, title, y_label, format, scale,
        None if out is None else os.fspath(out), name,
    )
    return [Path(p) for p in written]


def experiments():
    """Every experiment a scenario can name: one row per parameter and per metric, with
    columns ``experiment``, ``about``, ``kind`` (``param`` or ``metric``), ``name``, ``unit``,
    ``allowed``, ``default`` and ``help``."""
    rows = []
    for e in _native.experiments():
        for p in e["params"]:
            rows.append({"experiment": e["name"], "about": e["about"], "kind": "param", **p})
        for m in e["metrics"]:
            rows.append({"experiment": e["name"], "about": e["about"], "kind": "metric",
                         "allowed": None, "default": None, **m})
    return _table(rows, ["experiment", "about", "kind", "name", "unit", "allowed", "default", "help"])


def reproductions():
    """The experiments :func:`reproduce` can run: ``id``, ``paper``, ``title``."""
    return _table([{"id": i, "paper": p, "title": t} for i, p, t in _native.reproductions()],
                  ["id", "paper", "title"])


def reproduce(
    only: Optional[Union[str, Sequence[str]]] = None,
    scale: str = "quick",
    out: Optional[PathLike] = None,
    threads: Optional[int] = None,
    replace: bool = False,
):
    """Runs the papers' experiments and checks their claims, as ``cdnlab reproduce`` does,
    writing report.html and claims.json to ``out``. ``only`` names experiments (see
    :func:`reproductions`); ``scale`` is ``"quick"`` or ``"full"``. Without ``out`` the folder
    is the command's default: ``out/reproduce`` for every experiment, ``out/reproduce-ID+ID``
    for a selection, so a partial run never replaces a full report; a folder holding the report
    of another selection or scale is refused unless ``replace=True``. Returns the claims, one
    row each, with the columns :data:`CLAIM_COLUMNS` (``pass`` is the verdict)."""
    if scale not in ("quick", "full"):
        raise CdnlabError(f"scale {scale!r}: allowed 'quick' or 'full'")
    ids = [] if only is None else ([only] if isinstance(only, str) else list(only))
    path = _native.reproduce(
        None if out is None else os.fspath(out), ids, scale == "full", threads, replace
    )
    with open(path) as f:
        claims = json.load(f)["claims"]
    return _table(claims, CLAIM_COLUMNS)


def rbs(k: int, present: Callable[[int], bool], seed: int = 0):
    """Random binary search over hash indices 1..k, as the multi-hash DHT's requests do:
    ``present(i)`` says whether index i holds a replica. Returns (index served from or None,
    probes)."""
    return _native.rbs(k, present, seed)
