#!/usr/bin/env bash
# OSU 7.4 collectives, plain and preloaded, under each MPI installed by ../shared/peers/mpi-peers.sh
# (and the system MPI), in interleaved rounds: for every round, every MPI, every benchmark, the plain
# and the preloaded run back to back (their order alternating by round). Prints, per MPI, benchmark
# and message size, the median over rounds of OSU's average latency plain and preloaded, the ratio
# plain / preloaded (> 1: the preload is faster) with its spread over rounds, and writes the rows as
# JSON (../shared/conventions/benchmarks.md).
#
# Nonblocking ops (ibarrier, ibcast, iallreduce, ireduce, iallgather, ialltoall, igather, iscatter,
# ireduce_scatter_block, iallgatherv, ireduce_scatter; OSU 7.4 has no iscan) come from OSU's non_blocking
# directory; their figure is OSU's "Pure Comm." latency (start and wait with no computation between:
# the counterpart of the blocking latency). The reductions (reduce_scatter_block included) run on
# MPI_FLOAT (-T mpi_float: OSU's default MPI_CHAR is no reduction type cachecomm maps, so it would
# pass through). reduce_scatter is osu_reduce_scatter (MPI_Reduce_scatter, the message split into
# per-rank counts; sizes below 4 B hold no float and are skipped by OSU).
#
# b2b-<op> (b2b-bcast, b2b-reduce, b2b-allreduce, b2b-allgather, b2b-barrier) is not OSU's: it is
# bench/preload/back_to_back_bench.c, built here with each MPI's mpicc, timing calls back to back on
# the same buffers (no barrier between them, as an iterative code makes them).
#
# osu_compare.sh [--mpis system,ompi5,mpich5,impi] [--np 2] [--rounds 5] [--iters 200]
#                [--ops bcast,reduce,allreduce,allgather,barrier] [--max-size 4194304]
#                [--peers /opt/mpi-peers] [--json FILE] [--extra "osu args"] [--first-round N]
#                [--bind core|none]
# (--first-round: number the rounds from N, so that separate runs of one round each still
# alternate which side goes first. --bind: the launchers' binding; default core, none when oversubscribed.)
#
# Each MPI needs a preload built for it: the system MPI's in build/release, a peer's in
# build/mpi-<name> (`make test-mpi MPI_HOME=/opt/mpi-peers/<name>` builds it; Intel MPI's too).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mpis="system,ompi5,mpich5,impi"; np=2; rounds=5; iters=200; ops="bcast,reduce,allreduce,allgather,barrier"
max_size=4194304; peers=/opt/mpi-peers; json=""; extra=""; first_round=1; bind=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpis) mpis="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --ops) ops="$2"; shift 2 ;;
    --max-size) max_size="$2"; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    --extra) extra="$2"; shift 2 ;;
    --first-round) first_round="$2"; shift 2 ;;
    --bind) bind="$2"; shift 2 ;;
    *) echo "osu_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -z "$bind" ]]; then bind=core; [[ "$np" -gt "$(nproc)" ]] && bind=none; fi

# shellcheck source=bench/peers/mpis.sh
source "$root/bench/peers/mpis.sh"
osu_of() {
  local kind=blocking
  [[ "$2" == b2b-* ]] && { echo "$work/b2b-$1"; return; }
  [[ "$2" == i* ]] && kind=non_blocking
  echo "$peers/osu-$1/c/mpi/collective/$kind/osu_$2"
}
IFS=, read -r -a mpi_list <<<"$mpis"
IFS=, read -r -a op_list <<<"$ops"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ ",$ops" == *,b2b-* ]]; then
  for mpi in "${mpi_list[@]}"; do  # the build's own copy where there is one (a node without a compiler)
    built="$(dirname "$(preload_of "$mpi")")/../../bench/cachecomm-b2b-bench"
    if [[ -x "$built" ]]; then cp "$built" "$work/b2b-$mpi"; else
      $(mpicc_of "$mpi") -O2 -o "$work/b2b-$mpi" "$root/bench/preload/back_to_back_bench.c"; fi
  done
fi
for mpi in "${mpi_list[@]}"; do
  [[ -f "$(preload_of "$mpi")" ]] || { echo "no preload for $mpi: $(preload_of "$mpi") (see the header)" >&2; exit 2; }
  for op in "${op_list[@]}"; do
    [[ -x "$(osu_of "$mpi" "$op")" ]] || { echo "no OSU program $(osu_of "$mpi" "$op")" >&2; exit 2; }
  done
done

for round in $(seq "$first_round" $((first_round + rounds - 1))); do
  for mpi in "${mpi_list[@]}"; do
    for op in "${op_list[@]}"; do
      size_args=(-m "1:$max_size"); [[ "$op" == *barrier ]] && size_args=()
      [[ "$op" == b2b-* ]] && size_args+=(--op "${op#b2b-}")
      [[ "$op" == ireduce || "$op" == iallreduce || "$op" == reduce_scatter || "$op" == reduce_scatter_block ||
        "$op" == ireduce_scatter_block || "$op" == ireduce_scatter ]] &&
        size_args+=(-T mpi_float)
      # shellcheck disable=SC2046,SC2086
      for side in $( ((round % 2)) && echo "plain preloaded" || echo "preloaded plain"); do
        out="$work/$mpi.$op.$side.$round"
        if [[ "$side" == plain ]]; then
          $(launcher "$mpi") "$(osu_of "$mpi" "$op")" "${size_args[@]}" -i "$iters" $extra >"$out" 2>&1 || true
        else
          $(launcher "$mpi") env LD_PRELOAD="$(preload_of "$mpi")" "$(osu_of "$mpi" "$op")" "${size_args[@]}" \
            -i "$iters" $extra >"$out" 2>&1 || true
        fi
      done
      echo "round $round/$rounds: $mpi osu_$op done" >&2
    done
  done
done

PYTHONPATH="$root/bench/peers" python3 - "$work" "$np" "$rounds" "$json" "$mpis" "$ops" <<'PY'
import glob, os, re, sys
from compare_report import compare, write_json
work, np, rounds, out, mpis, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5].split(","), sys.argv[6].split(",")
def parse(path, nonblocking):
    """OSU output: '# Size  Avg Latency(us)' rows, or one latency for the barrier. Nonblocking:
    '# Size  Overall  Compute  Pure Comm.  Overlap' rows (no size for the barrier): Pure Comm."""
    rows = {}
    for line in open(path, errors="replace"):
        fields = line.split()
        numbers = all(re.fullmatch(r"[\d.]+", f) for f in fields) and fields
        if nonblocking and numbers and len(fields) == 5 and re.fullmatch(r"\d+", fields[0]):
            rows[int(fields[0])] = float(fields[3])
        elif nonblocking and numbers and len(fields) == 4:
            rows[0] = float(fields[2])
        elif nonblocking:
            continue
        elif len(fields) >= 2 and re.fullmatch(r"\d+", fields[0]) and re.fullmatch(r"[\d.]+", fields[1]):
            rows[int(fields[0])] = float(fields[1])
        elif len(fields) == 1 and re.fullmatch(r"[\d.]+", fields[0]):
            rows[0] = float(fields[0])
    return rows
cores = os.cpu_count()
print(f"OSU 7.4, {np} ranks on {cores} cores{' (oversubscribed)' if np > cores else ''}, {rounds} interleaved rounds;"
      " medians over rounds of OSU's average latency; ratio = plain / preloaded (> 1: preload faster)")
results, failed = [], []
for mpi in mpis:
    for op in ops:
        per_side = {}
        for side in ("plain", "preloaded"):
            runs = [parse(p, op.startswith("i")) for p in sorted(glob.glob(f"{work}/{mpi}.{op}.{side}.*"))]
            if any(not r for r in runs):
                failed.append(f"{mpi} osu_{op} {side}")
            per_side[side] = [r for r in runs if r]
        if not per_side["plain"] or not per_side["preloaded"]:
            continue
        benchmark = op if op.startswith("b2b-") else f"osu_{op}"
        results += compare(f"{mpi} {benchmark}", per_side["plain"], per_side["preloaded"],
                           {"op": op, "mpi_library": mpi, "buffers": "hot",
                            "timing": "back-to-back" if op.startswith("b2b-") else "per-call", "benchmark": benchmark})
if failed:
    print("\nruns that printed no results (see OSU's output):", ", ".join(failed))
write_json(out, "osu_compare.sh", "osu", np, results)
PY
