"""cdnlab policy name -> PyPI libcachesim class name, for every policy both have (agree.py and
compare.py), and which ones cdnlab reproduces miss for miss (docs/cache.md says why the other
differs): all but LFUDA (libCacheSim's crashes or crawls; cdnlab follows the paper). Also how the
scripts open a trace in libCacheSim, and how they clear up before a timed part."""
POLICIES = {"lru": "LRU", "fifo": "FIFO", "lfu": "LFU", "s3fifo": "S3FIFO", "sieve": "Sieve",
            "clock": "Clock", "arc": "ARC", "twoq": "TwoQ", "slru": "SLRU", "wtinylfu": "WTinyLFU",
            "gdsf": "GDSF", "lfuda": "LFUDA", "belady": "Belady", "lirs": "LIRS"}
EXACT = {"objects": set(POLICIES) - {"lfuda"}, "bytes": set(POLICIES) - {"lfuda"}}


def reader(trace, unit, sampler=None):
    """libCacheSim's reader of an oracleGeneral trace, counting objects (every size read as 1) or
    bytes, through `sampler` when given."""
    import libcachesim as lcs
    param = lcs.ReaderInitParam(ignore_obj_size=unit == "objects", sampler=sampler)
    return lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE, param)


def quiesce():
    """Frees what earlier libCacheSim runs left in this process before a timed part, so that
    neither side pays for it: Python's garbage, then glibc's freed chunks. A cache of 769,497
    objects freed leaves that many small chunks, and the next large allocation in this process
    merges them first: 41 ms, which fell inside the `subprocess.run` that timed `cdnlab mrc` on
    the 10^7-request trace (a `true` spawned there took 41 ms, after `malloc_trim(0)` 1.3 ms)."""
    import ctypes
    import gc
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to merge ahead
