#!/usr/bin/env bash
# Online selection's cost in a plain MPI loop: cachecomm-online-bench plain, preloaded with online
# selection on, and preloaded with it off, alternating (plain, on, off, plain, ...), then per
# operation and size the medians over the rounds of the first calls' sum and the settled median.
#
# run_online_bench.sh [--np 2] [--rounds 3] [--calls 2000] [--build DIR] [--mpirun EXE]
set -euo pipefail

np=2; rounds=3; calls=2000; build="$(cd "$(dirname "$0")/../.." && pwd)/build/release"; mpirun=mpirun
while [[ $# -gt 0 ]]; do
  case "$1" in
    --np) np="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --calls) calls="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --mpirun) mpirun="$2"; shift 2 ;;
    *) echo "run_online_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench="$build/bench/cachecomm-online-bench"
lib="$build/src/preload/libcachecomm_mpi.so"
[[ -x "$bench" && -f "$lib" ]] || { echo "build $bench and $lib first" >&2; exit 2; }
# Sanitizer builds (tests only): their runtimes must be preloaded ahead of the library.
if [[ -n "${CACHECOMM_TEST_PRELOAD_FIRST:-}" ]]; then lib="$CACHECOMM_TEST_PRELOAD_FIRST:$lib"; fi
flags=()
if "$mpirun" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then flags=(--oversubscribe --allow-run-as-root); fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $np ranks, $calls calls" >&2
for round in $(seq 1 "$rounds"); do
  "$mpirun" -n "$np" "${flags[@]}" "$bench" --calls "$calls" >>"$work/plain.jsonl"
  "$mpirun" -n "$np" "${flags[@]}" env LD_PRELOAD="$lib" CACHECOMM_TUNING=off \
    CACHECOMM_ONLINE_SELECTION=on CACHECOMM_PRELOAD_SUMMARY=1 "$bench" --calls "$calls" \
    >>"$work/on.jsonl" 2>>"$work/on.summary"
  "$mpirun" -n "$np" "${flags[@]}" env LD_PRELOAD="$lib" CACHECOMM_TUNING=off \
    CACHECOMM_ONLINE_SELECTION=off "$bench" --calls "$calls" >>"$work/off.jsonl"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "online selection's choices (count over the rounds):"
grep -o "[a-z]* [0-9]* [KM]*i*B\.\.[0-9]* [KM]*i*B: [a-z-]* (measured online" "$work/on.summary" |
  sed 's/ (measured online//' | sort | uniq -c
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
rows = {}
for variant in ("plain", "on", "off"):
    for line in open(f"{work}/{variant}.jsonl"):
        r = json.loads(line)
        rows.setdefault((r["op"], r["bytes"]), {}).setdefault(variant, []).append(r)
print(f"{'op':9} {'bytes':>8} | {'first calls (sum, us)':^30} | {'settled median per call (us)':^44}")
print(f"{'':9} {'':>8} | {'plain':>9} {'on':>9} {'off':>9} | {'plain':>8} {'on':>8} {'off':>8} {'on/plain':>8} {'off/plain':>9}")
for (op, size), by in rows.items():
    first = {v: statistics.median(r["first_us"] for r in by[v]) for v in by}
    after = {v: statistics.median(r["median_after_us"] for r in by[v]) for v in by}
    print(f"{op:9} {size:>8} | {first['plain']:9.0f} {first['on']:9.0f} {first['off']:9.0f} | "
          f"{after['plain']:8.2f} {after['on']:8.2f} {after['off']:8.2f} "
          f"{after['on'] / after['plain']:8.2f} {after['off'] / after['plain']:9.2f}")
print(f"(first {next(iter(rows.values()))['plain'][0]['first_calls']} calls; medians over the rounds; ratio < 1: faster than plain MPI)")
PY
