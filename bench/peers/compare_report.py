"""Plain against preloaded, one program under one MPI, over interleaved rounds: the table that
osu_compare.sh and imb_compare.sh print, and their JSON rows (../shared/conventions/benchmarks.md)."""
import json
import os
import socket
import statistics


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    return {"host": socket.gethostname(), "cpu": cpu, "cores": os.cpu_count()}


def compare(name, plain_runs, preloaded_runs, row_fields):
    """Print one program's table (median over rounds per size, plain / preloaded with its spread, and
    the ratio of each side's best round: the VM's slow phases, 2-3x for a few seconds, land on one
    side in some rounds, and the best rounds compare the two when neither was in one) and return
    its JSON rows. *_runs: one {bytes: microseconds} per round; row_fields: what every row
    says besides the figures (op, mpi_library, buffers, timing, benchmark)."""
    sizes = sorted(set.intersection(*(set(r) for r in plain_runs + preloaded_runs)))
    print(f"\n{name}\n{'bytes':>9}{'plain us':>11}{'preload us':>12}{'ratio':>8}  spread over rounds  best/best")
    rows = []
    for size in sizes:
        plain = [r[size] for r in plain_runs]
        pre = [r[size] for r in preloaded_runs]
        ratios = [a / b for a, b in zip(plain, pre) if b > 0]
        mp, mc = statistics.median(plain), statistics.median(pre)
        print(f"{size:>9}{mp:>11.2f}{mc:>12.2f}{mp / mc if mc > 0 else float('nan'):>8.2f}  "
              f"{min(ratios, default=float('nan')):.2f}-{max(ratios, default=float('nan')):.2f}"
              f"{min(plain) / min(pre) if min(pre) > 0 else float('nan'):>11.2f}")
        for impl, values in (("mpi", plain), ("cachecomm", pre)):
            p25, p75 = quartiles(values)
            rows.append({**row_fields, "impl": impl, "algorithm": "preload" if impl == "cachecomm" else "default",
                         "bytes": size, "iters": len(values), "median_us": statistics.median(values),
                         "min_us": min(values), "p25_us": p25, "p75_us": p75})
    return rows


def write_json(path, tool, suite, np, results):
    if not path:
        return
    m = machine()
    with open(path, "w") as out:
        json.dump({"tool": tool, "suite": suite, "machine": m, "np": np, "oversubscribed": np > m["cores"],
                   "results": results}, out, indent=1)
