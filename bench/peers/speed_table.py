#!/usr/bin/env python3
"""The speed table of issue 18 from osu_compare.sh's JSON (--mpis with several MPIs, one run):
per benchmark and size, every MPI's plain median, cachecomm's (the preload under the system MPI, and
the fastest preloaded run under any MPI), and best-MPI / cachecomm (> 1: cachecomm is faster).

  speed_table.py RESULTS.json [--sizes 8,4096,32768,262144,1048576,4194304] [--memcpy LIMITS.json]
"""
import argparse
import json
from collections import defaultdict


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--sizes", default="8,4096,32768,262144,1048576,4194304")
    parser.add_argument("--memcpy", metavar="LIMITS.json",
                        help="cachecomm-bench limits JSON: its memcpy time beside each size it measured")
    args = parser.parse_args()
    memcpy = {}
    if args.memcpy:
        for row in json.load(open(args.memcpy))["results"]:
            if row.get("op") == "memcpy" and row.get("algorithm") == "memcpy":
                memcpy[row["bytes"]] = row["median_us"]
    data = json.load(open(args.results))
    sizes = [int(s) for s in args.sizes.split(",")]
    plain = defaultdict(dict)      # (benchmark, bytes) -> mpi -> median us
    preloaded = defaultdict(dict)  # (benchmark, bytes) -> mpi -> median us
    mpis = []
    for row in data["results"]:
        key = (row["benchmark"], row["bytes"])
        (preloaded if row["impl"] == "cachecomm" else plain)[key][row["mpi_library"]] = row["median_us"]
        if row["mpi_library"] not in mpis:
            mpis.append(row["mpi_library"])
    print(f"{data['np']} ranks on {data['machine']['cores']} cores ({data['machine']['cpu']}); medians in us; "
          "ratio = fastest plain MPI / cachecomm (> 1: cachecomm faster)")
    header = f"| benchmark | bytes | {' | '.join(mpis)} | cachecomm (system MPI) | best-MPI ratio | cachecomm (best under any MPI) | ratio |"
    if memcpy:
        header += " memcpy |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for benchmark in sorted({b for b, _ in plain}):
        for size in ([0] if benchmark.endswith("barrier") else sizes):
            key = (benchmark, size)
            if key not in plain:
                continue
            best_mpi = min(plain[key].values())
            ours = preloaded[key].get("system")
            best_ours = min(preloaded[key].values()) if preloaded[key] else None
            cells = [f"{plain[key][m]:.2f}" if m in plain[key] else "-" for m in mpis]
            ratio = f"{best_mpi / ours:.2f}" if ours else "-"
            best_ratio = f"{best_mpi / best_ours:.2f}" if best_ours else "-"
            line = (f"| {benchmark} | {size} | {' | '.join(cells)} | {ours if ours is None else f'{ours:.2f}'} | {ratio} "
                    f"| {best_ours if best_ours is None else f'{best_ours:.2f}'} | {best_ratio} |")
            if memcpy:
                line += f" {memcpy[size]:.2f} |" if size in memcpy else " - |"
            print(line)


if __name__ == "__main__":
    main()
