"""Session 20: issue 18's speed table from mpis_table.sh output. Per call (OSU) and back to back
(b2b-*), op x size: the median over rounds of each MPI plain and of cachecomm (preloaded under Open
MPI 4.1), the best MPI, and best MPI / cachecomm (> 1: cachecomm faster). Rounds whose state probe
(last field: a 32 KiB exchange in us, taken before each launch) exceeds SLOW are kept
apart (the VM's slow state). "iters" in the JSON: the rounds behind the median.
Usage: mpis_table_summary.py OUT.txt [--json FILE] [--slow 6]"""
import json
import statistics as st
import sys
from collections import defaultdict

path = sys.argv[1]
slow = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else 6.0
rows = defaultdict(list)
states = {}
for line in open(path):
    p = line.split()
    if len(p) < 6 or not p[4].replace(".", "", 1).isdigit():
        continue
    variant, op, size, rnd, us, state = p[0], p[1], int(p[2]), int(p[3]), float(p[4]), float(p[5])
    states[rnd] = state
    rows[(op, size, variant, state > slow)].append(us)
def quartiles(values):
    return st.quantiles(values, n=4, method="inclusive") if len(values) > 1 else [values[0]] * 3


mpis = ["ompi41", "ompi5", "mpich5", "impi"]
names = {"ompi41": "Open MPI 4.1", "ompi5": "Open MPI 5", "mpich5": "MPICH 5", "impi": "Intel MPI",
         "cachecomm": "cachecomm"}
print("rounds and their state probe (us):", ", ".join(f"{r}: {s}" for r, s in sorted(states.items())))
out = []
for slow_state in (False, True):
    keys = sorted({(k[0], k[1]) for k in rows if k[3] == slow_state})
    if not keys:
        continue
    print(f"\n{'slow' if slow_state else 'usual'} state rounds")
    print(f"{'op':<14}{'bytes':>9} " + " ".join(f"{names[m]:>13}" for m in mpis) +
          f" {'cachecomm':>10} {'best MPI':>10} {'best/cc':>8}  cc spread")
    for op, size in keys:
        med = {v: st.median(rows[(op, size, v, slow_state)]) for v in mpis + ["cachecomm"]
               if rows.get((op, size, v, slow_state))}
        if "cachecomm" not in med or not any(m in med for m in mpis):
            continue  # a cell that only one side's rounds reached in this state
        best = min((med[m], m) for m in mpis if m in med)
        cc = rows[(op, size, "cachecomm", slow_state)]
        print(f"{op:<14}{size:>9} " + " ".join(f"{med.get(m, float('nan')):>13.2f}" for m in mpis) +
              f" {med['cachecomm']:>10.2f} {names[best[1]]:>10} {best[0] / med['cachecomm']:>8.2f}"
              f"  {min(cc):.2f}-{max(cc):.2f} ({len(cc)} rounds)")
        for v, m in med.items():
            out.append({"op": op.replace("b2b-", ""), "impl": "cachecomm" if v == "cachecomm" else "mpi",
                        "algorithm": "auto" if v == "cachecomm" else "default",
                        "mpi_library": names["ompi41"] if v == "cachecomm" else names[v],
                        "bytes": size, "median_us": m, "min_us": min(rows[(op, size, v, slow_state)]),
                        "p25_us": quartiles(rows[(op, size, v, slow_state)])[0],
                        "p75_us": quartiles(rows[(op, size, v, slow_state)])[2],
                        "iters": len(rows[(op, size, v, slow_state)]),
                        "max_us": max(rows[(op, size, v, slow_state)]),
                        "rounds": len(rows[(op, size, v, slow_state)]), "buffers": "hot",
                        "timing": "back-to-back" if op.startswith("b2b-") else "per-call",
                        "benchmark": op if op.startswith("b2b-") else f"osu_{op}",
                        "vm_state": "slow" if slow_state else "usual"})
if "--json" in sys.argv:
    doc = {"tool": "mpis_table.sh", "suite": "issue-18 speed table", "np": 2, "oversubscribed": False,
           "machine": {"host": "cpp-kernels VM", "cpu": "AMD EPYC (family 25 model 17, KVM)", "cores": 2, "mpi": "Open MPI 4.1.4"},
           "version": "0.2.0",
           "results": out}
    json.dump(doc, open(sys.argv[sys.argv.index("--json") + 1], "w"), indent=1)
