#!/usr/bin/env python3
"""Median over runs of auto/best and MPI/auto per (op, bytes, buffers, timing); each run's JSON apart."""
import json, sys, collections, statistics
per = collections.defaultdict(list)
for path in sys.argv[1:]:
    cells = collections.defaultdict(list)
    for r in json.load(open(path))["results"]:
        cells[(r["op"], r.get("bytes", 0), r.get("buffers", "-"), r.get("timing", "-"))].append(r)
    for key, c in cells.items():
        auto = [r for r in c if str(r.get("algorithm", "")).startswith("auto")]
        rest = [r for r in c if not str(r.get("algorithm", "")).startswith("auto")]
        mpi = [r for r in rest if r["impl"] == "mpi"]
        if not auto or not rest or not mpi: continue
        best = min(rest, key=lambda r: r["median_us"])
        per[key].append((auto[0]["median_us"] / best["median_us"], mpi[0]["median_us"] / auto[0]["median_us"], auto[0]["algorithm"]))
print(f"{'op':10} {'bytes':>8} {'buf':4} {'timing':12} {'auto/best':>9} {'(range)':>11} {'MPI/auto':>8} {'(range)':>11}  auto")
bad = []
for key in sorted(per):
    v = per[key]
    ab = [x[0] for x in v]; ma = [x[1] for x in v]
    print(f"{key[0]:10} {key[1]:>8} {key[2]:4} {key[3]:12} {statistics.median(ab):9.2f} {min(ab):5.2f}-{max(ab):<5.2f} {statistics.median(ma):8.2f} {min(ma):5.2f}-{max(ma):<5.2f}  {','.join(sorted({x[2] for x in v}))}")
    if statistics.median(ab) > 1.10: bad.append(key)
print("median auto/best above 1.10:", bad)
