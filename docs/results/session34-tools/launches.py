#!/usr/bin/env python3
"""Merges cachecomm-paired-bench JSON files of several launches into one file and prints, per
(op, bytes, mode), the median, lowest and highest ratio (MPI's time / the preload's) over the
launches. Each input is named <prefix>-<mode>-r<launch>.json (mode: what the launch set, e.g.
"off" for CACHECOMM_NONBLOCKING_SINGLE_COPY=off).

    launches.py --out merged.json /tmp/s34/dist-*-r*.json
"""
import argparse
import json
import os
import re
import statistics


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", help="merged JSON (the runs, each with its mode and launch)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    runs, ratios = [], {}
    for path in sorted(args.files):
        match = re.match(r".*-([a-z0-9]+)-r(\d+)\.json$", os.path.basename(path))
        if not match:
            raise SystemExit(f"{path}: not <prefix>-<mode>-r<launch>.json")
        mode, launch = match.group(1), int(match.group(2))
        run = json.load(open(path))
        run["mode"], run["launch"] = mode, launch
        runs.append(run)
        times = {}
        for row in run["results"]:
            times.setdefault((row["op"], row["bytes"]), {})[row["impl"]] = row["median_us"]
        for key, by_impl in times.items():
            ratio = by_impl["mpi"] / by_impl["cachecomm"]
            ratios.setdefault(key, {}).setdefault(mode, []).append(ratio)
    print(f"{'op':<12}{'bytes':>9}  mode  median   min   max  launches below 0.97")
    for (op, size), modes in sorted(ratios.items()):
        for mode, values in sorted(modes.items()):
            low = sum(value < 0.97 for value in values)
            print(f"{op:<12}{size:>9}  {mode:<4} {statistics.median(values):6.2f} "
                  f"{min(values):5.2f} {max(values):5.2f}  {low} of {len(values)}")
    if args.out:
        with open(args.out, "w") as out:
            json.dump({"suite": "preload-paired-launches", "runs": runs}, out, indent=1)


if __name__ == "__main__":
    main()
