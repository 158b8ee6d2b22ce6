#!/usr/bin/env bash
# One job: the plain MPI benchmark with and without the preload library, alternating runs
# (plain, preloaded, plain, ...), then the ratio plain / preloaded of the median per-call times
# (> 1: the preload library is faster).
#
# run_preload_bench.sh [--np 2] [--rounds 3] [--quick] [--thread-multiple] [--build DIR] [--mpirun EXE]
#                      [--json FILE]
# --thread-multiple: both runs initialize MPI at MPI_THREAD_MULTIPLE (one thread makes the calls).
set -euo pipefail

np=2; rounds=3; quick=""; level=""; build="$(cd "$(dirname "$0")/../.." && pwd)/build/release"; mpirun=mpirun; json=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --np) np="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --quick) quick="--quick"; rounds=1; shift ;;
    --thread-multiple) level="--thread-multiple"; shift ;;
    --build) build="$2"; shift 2 ;;
    --mpirun) mpirun="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    *) echo "run_preload_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench="$build/bench/cachecomm-preload-bench"
lib="$build/src/preload/libcachecomm_mpi.so"
[[ -x "$bench" && -f "$lib" ]] || { echo "build $bench and $lib first" >&2; exit 2; }
# Sanitizer builds (tests only): their runtimes must be preloaded ahead of the library.
if [[ -n "${CACHECOMM_TEST_PRELOAD_FIRST:-}" ]]; then lib="$CACHECOMM_TEST_PRELOAD_FIRST:$lib"; fi

flags=()
if "$mpirun" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE"; then flags=(--oversubscribe --allow-run-as-root); fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for round in $(seq 1 "$rounds"); do
  "$mpirun" -n "$np" "${flags[@]}" "$bench" $quick $level >>"$work/mpi.jsonl"
  "$mpirun" -n "$np" "${flags[@]}" env LD_PRELOAD="$lib" CACHECOMM_PRELOAD_SUMMARY=1 "$bench" $quick $level \
    >>"$work/cachecomm.jsonl" 2>>"$work/summary.txt"
done

python3 - "$work" "$np" "$cores" "$json" <<'PY'
import json, statistics, sys, socket
work, np, cores, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def load(name):
    runs = {}
    for line in open(f"{work}/{name}.jsonl"):
        r = json.loads(line)
        runs.setdefault(r["op"], []).append(r)
    return runs
mpi, ours = load("mpi"), load("cachecomm")
over = np > cores
print(f"preload benchmark: {np} ranks on {cores} cores{' (oversubscribed)' if over else ''}, "
      f"{len(mpi['barrier'])} alternating run(s) each; median of the runs' per-call medians")
print(f"{'operation':<30}{'MPI us':>10}{'preloaded us':>14}{'speed-up':>10}")
results = []
rows = (("barrier", "MPI_Barrier"), ("allreduce", "MPI_Allreduce 8 B"), ("bcast", "MPI_Bcast 1 MiB"),
        ("win_fence_put", "fence epoch + 8 B put"), ("win_pscw_put", "PSCW ring epoch + 8 B put"),
        ("win_lock_put_flush", "lock + put + flush + unlock"),
        ("win_fetch_and_op_fence", "Fetch_and_op (fence epoch)"),
        ("win_fetch_and_op_lock_all", "Fetch_and_op + flush (lock_all)"))
for op, label in rows:
    m = statistics.median(r["median_us"] for r in mpi[op])
    c = statistics.median(r["median_us"] for r in ours[op])
    print(f"{label:<30}{m:>10.3f}{c:>14.3f}{m / c:>9.2f}x")
    for impl, runs, med in (("mpi", mpi[op], m), ("cachecomm", ours[op], c)):
        results.append({"op": op, "impl": impl, "algorithm": "preload" if impl == "cachecomm" else "default",
                        "bytes": runs[0]["bytes"], "iters": sum(r["iters"] for r in runs), "median_us": med,
                        "p25_us": statistics.median(r["p25_us"] for r in runs),
                        "p75_us": statistics.median(r["p75_us"] for r in runs),
                        "min_us": min(r["min_us"] for r in runs)})
summary = open(f"{work}/summary.txt").read()
start = summary.rfind("cachecomm preload summary")
print(summary[start:].rstrip() + "  [last preloaded run]" if start >= 0 else "no preload summary: the library was not interposed")
if out:
    json.dump({"tool": "run_preload_bench.sh", "suite": "preload", "machine": {"host": socket.gethostname(), "cores": cores},
               "np": np, "oversubscribed": over, "results": results}, open(out, "w"), indent=1)
PY
