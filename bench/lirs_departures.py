"""libCacheSim's LIRS on the input that found cdnlab's unlogged LIRS departure: after each
request, the objects find(update_cache=False) reports resident, and libCacheSim's own object
count. cdnlab's test `lirs_logs_every_departure` pins the same sets. Run with bench/.venv
(bench/compare.sh makes it): bench/.venv/bin/python bench/lirs_departures.py"""
import libcachesim as lcs

IDS = [0, 0, 0, 1, 0, 1, 0, 2, 3, 1, 0, 0, 3, 2, 4]
c = lcs.LIRS(cache_size=2)
for i in IDS:
    hit = c.get(lcs.Request(obj_id=i, obj_size=1))
    resident = [x for x in range(5) if c.find(lcs.Request(obj_id=x, obj_size=1), False) is not None]
    print(f"request {i}: {'hit ' if hit else 'miss'} resident {resident} n_obj {c.get_n_obj()}")
