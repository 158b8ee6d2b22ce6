"""Session 22: medians of bench_rounds.sh runs (cachecomm-bench coll JSON, one file per run), split by
the VM state its probe read before the run (>4 us: slow); each cell is a candidate's median over
the MPI call's median (< 1: cachecomm faster). Usage: agg.py DIR"""
import json, glob, sys, statistics, collections
d = sys.argv[1]
probes = dict(l.split() for l in open(f"{d}/probes.txt"))
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{d}/r*.json")):
    r = f.split("/")[-1][1:-5]
    state = "slow" if float(probes.get(r, 0)) > 4 else "usual"
    for row in json.load(open(f))["results"]:
        if "median_us" not in row: continue
        key = (row["op"], row.get("buffers"), row.get("timing"), row["bytes"], state)
        rows[key][row["algorithm"] if row["impl"] == "cachecomm" else "MPI"].append(row["median_us"])
for key in sorted(rows):
    algs = rows[key]
    mpi = statistics.median(algs.get("MPI", [float("nan")]))
    cells = []
    for a, v in sorted(algs.items()):
        cells.append(f"{a}={statistics.median(v)/mpi:.2f}")
    print(*key[:5], f"n={len(algs['MPI'])} mpi={mpi:.1f}", " ".join(cells))
