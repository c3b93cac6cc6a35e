"""Type hints of the native module (crates/cdnlab-py). Use the package `cdnlab`, which wraps it."""

from os import PathLike
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

class CdnlabError(ValueError):
    """Bad input to cdnlab: the message names what is wrong and what is allowed."""

class Cache:
    """One cache driven request by request."""

    def __init__(self, policy: str, capacity: int, unit: str = "objects") -> None: ...
    def access(self, id: int, size: int = 1, next_access: int = -1) -> bool:
        """Requests object `id` of `size` bytes; True on a hit. `next_access` (the index of the
        object's next request, -1 for none) is read by `belady` only."""
    def __contains__(self, id: int) -> bool: ...
    def __len__(self) -> int: ...
    @property
    def used(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def unit(self) -> str: ...
    @property
    def policy(self) -> str: ...

class TpSolution:
    cost: int
    flows: List[Tuple[int, int, int]]
    u: Optional[List[int]]
    v: Optional[List[int]]
    pivots: Optional[int]
    rows: int
    cols: int
    supply: List[int]
    demand: List[int]
    seconds: float
    def resolve(
        self, supply: Optional[bytes] = None, demand: Optional[bytes] = None, balance: Optional[str] = None
    ) -> "TpSolution": ...

class Gwtw:
    """One Go-With-The-Winner client over its candidate servers."""

    def __init__(
        self,
        candidates: Sequence[int],
        tau: int = 20,
        probe: str = "all",
        retrial: str = "on-shortfall",
        q: float = 0.5,
        best: float = 1.0,
        seed: int = 0,
    ) -> None: ...
    def targets(self) -> List[int]:
        """The servers the next request goes to: one when settled, several while probing."""
    def observe(self, server: int, value: Optional[float]) -> Optional[Tuple[str, int, int]]:
        """Feeds an outcome (1 hit, 0 miss, a bit rate; None: not counted). Returns None,
        ("settled", s, s), ("retrial", s, s) or ("moved", from, to)."""
    @property
    def settled(self) -> Optional[int]: ...
    @property
    def in_trial(self) -> bool: ...
    @property
    def candidates(self) -> List[int]: ...

class RbsSearch:
    """Random binary search over hash indices 1..k, one probe at a time."""

    def __init__(self, k: int, seed: int = 0) -> None: ...
    def next(self) -> Optional[int]: ...
    def missed(self) -> None: ...
    @property
    def probes(self) -> int: ...

def replay(
    trace: Union[str, PathLike],
    policies: Sequence[str],
    sizes: Sequence[Union[str, float]],
    size_unit: Optional[str] = None,
    format: str = "oracle-general",
    threads: Optional[int] = None,
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
) -> List[Dict[str, Any]]: ...
def replay_columns() -> List[str]: ...
def mrc_columns() -> List[str]: ...
def hierarchy(
    trace: Union[str, PathLike],
    edge_size: Union[int, float, str],
    parent_sizes: Sequence[Union[int, float, str]],
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
) -> List[Dict[str, Any]]: ...
def hierarchy_columns() -> List[str]: ...
def mrc(
    trace: Union[str, PathLike],
    sizes: Optional[Sequence[Union[str, int]]] = None,
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
) -> List[Dict[str, Any]]: ...
def policies() -> List[str]: ...
def tp_solve(
    supply: bytes, demand: bytes, cost: bytes, balance: Optional[str] = None, method: str = "optimal"
) -> TpSolution: ...
def erlang_b(load: float, servers: int) -> float:
    """Erlang-B blocking probability of `load` Erlangs offered to `servers` servers."""
def experiments() -> List[Dict[str, Any]]: ...
def run_scenario(
    text: str,
    name: Optional[str],
    out: Union[str, PathLike],
    threads: Optional[int] = None,
    shard: Optional[str] = None,
    resume: bool = False,
    progress: bool = False,
) -> int: ...
def scenario_toml(scenario: Dict[str, Any]) -> str: ...
def reproduce(
    out: Optional[Union[str, PathLike]] = None,
    only: List[str] = ...,
    full: bool = False,
    threads: Optional[int] = None,
    replace: bool = False,
) -> PathLike: ...
def reproductions() -> List[Tuple[str, str, str]]: ...
def rbs(k: int, present: Callable[[int], bool], seed: int = 0) -> Tuple[Optional[int], int]: ...
def gen_trace(
    out: Union[str, PathLike],
    objects: int = 1_000_000,
    requests: int = 10_000_000,
    alpha: float = 0.8,
    size: int = 1,
    max_size: Optional[int] = None,
    seed: int = 1,
) -> None: ...
def trace_stats(
    trace: Union[str, PathLike], format: str = "oracle-general", plot_dir: Optional[str] = None
) -> str: ...
def merge(dirs: Sequence[str], out: str) -> int: ...
def plot(
    dir: str,
    x: Optional[str] = None,
    y: Sequence[str] = ...,
    series: Optional[str] = None,
    where: Sequence[str] = ...,
    log_x: bool = False,
    log_y: bool = False,
    title: Optional[str] = None,
    y_label: Optional[str] = None,
    format: str = "both",
    scale: float = 2.0,
    out: Optional[str] = None,
    name: str = "plot",
) -> List[str]: ...
