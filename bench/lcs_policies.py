"""cdnlab policy name -> PyPI libcachesim class name, for every policy both have (agree.py and
compare.py), and which ones cdnlab reproduces miss for miss (docs/cache.md says why the other
differs): all but LFUDA (libCacheSim's crashes or crawls; cdnlab follows the paper). Also how the
scripts open a trace in libCacheSim."""
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
