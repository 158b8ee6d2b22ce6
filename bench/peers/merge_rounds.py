#!/usr/bin/env python3
"""Merges osu_compare.sh JSON files of single rounds (--rounds 1 --first-round N, one file each: a
run cut short keeps the rounds it finished) into one file with medians over the rounds, and prints
the plain / preloaded table (ratio > 1: the preload is faster).

    merge_rounds.py OUT.json ROUND1.json ROUND2.json ...
"""
import collections
import json
import statistics
import sys


def main(out, paths):
    values = collections.defaultdict(list)
    first = None
    for path in paths:
        data = json.load(open(path))
        first = first or data
        for row in data["results"]:
            key = (row["mpi_library"], row["benchmark"], row["op"], row["impl"], row["algorithm"],
                   row["buffers"], row["timing"], row["bytes"])
            values[key].append(row["median_us"])
    results = []
    for key, v in sorted(values.items()):
        mpi, benchmark, op, impl, algorithm, buffers, timing, size = key
        quartiles = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        results.append({"op": op, "impl": impl, "algorithm": algorithm, "mpi_library": mpi,
                        "bytes": size, "iters": len(v), "median_us": statistics.median(v),
                        "min_us": min(v), "p25_us": quartiles[0], "p75_us": quartiles[2],
                        "buffers": buffers, "timing": timing, "benchmark": benchmark})
    merged = dict(first)
    merged["results"] = results
    merged["rounds"] = len(paths)
    json.dump(merged, open(out, "w"), indent=1)

    print(f"{len(paths)} rounds, {merged['np']} ranks on {merged['machine']['cores']} cores; "
          "medians over rounds, ratio = plain / preloaded (spread over rounds)")
    by_cell = collections.defaultdict(dict)
    for (mpi, benchmark, _, impl, _, _, _, size), v in values.items():
        by_cell[(mpi, benchmark, size)][impl] = v
    current = None
    for (mpi, benchmark, size), sides in sorted(by_cell.items()):
        if "mpi" not in sides or "cachecomm" not in sides:
            continue
        if current != (mpi, benchmark):
            current = (mpi, benchmark)
            print(f"\n{mpi} {benchmark}\n{'bytes':>9}{'plain us':>11}{'preload us':>12}{'ratio':>8}  spread")
        plain, pre = sides["mpi"], sides["cachecomm"]
        ratios = [a / b for a, b in zip(plain, pre) if b > 0]
        mp, mc = statistics.median(plain), statistics.median(pre)
        print(f"{size:>9}{mp:>11.2f}{mc:>12.2f}{mp / mc:>8.2f}  {min(ratios):.2f}-{max(ratios):.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
