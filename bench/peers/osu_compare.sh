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

launcher() {  # the launcher command line for one MPI, np ranks
  case "$1" in
    system) echo "mpirun -np $np --oversubscribe --bind-to $bind" ;;
    ompi5) echo "$peers/ompi5/bin/mpirun -np $np --oversubscribe --bind-to $bind" ;;
    mpich5) echo "$peers/mpich5/bin/mpiexec -np $np -bind-to $bind" ;;
    impi) echo "env PATH=$peers/impi/bin:$PATH I_MPI_ROOT=$peers/impi I_MPI_FABRICS=shm $peers/impi/bin/mpirun -n $np -host localhost -ppn $np" ;;
    *) echo "osu_compare.sh: unknown MPI $1" >&2; exit 2 ;;
  esac
}
preload_of() {
  case "$1" in
    system) echo "$root/build/release/src/preload/libcachecomm_mpi.so" ;;
    *) echo "$root/build/mpi-$1/src/preload/libcachecomm_mpi.so" ;;
  esac
}
osu_of() {
  local kind=blocking
  [[ "$2" == b2b-* ]] && { echo "$work/b2b-$1"; return; }
  [[ "$2" == i* ]] && kind=non_blocking
  echo "$peers/osu-$1/c/mpi/collective/$kind/osu_$2"
}
mpicc_of() {
  case "$1" in
    system) echo mpicc ;;
    impi) echo "env I_MPI_ROOT=$peers/impi $peers/impi/bin/mpicc" ;;
    *) echo "$peers/$1/bin/mpicc" ;;
  esac
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

python3 - "$work" "$np" "$rounds" "$json" "$mpis" "$ops" <<'PY'
import glob, json, os, re, socket, statistics, sys
work, np, rounds, out, mpis, ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5].split(","), sys.argv[6].split(",")
cores = os.cpu_count()
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
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
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
        sizes = sorted(set.intersection(*(set(r) for r in per_side["plain"] + per_side["preloaded"])))
        print(f"\n{mpi} {op if op.startswith('b2b-') else 'osu_' + op}\n{'bytes':>9}{'plain us':>11}{'preload us':>12}{'ratio':>8}  spread over rounds")
        for size in sizes:
            plain = [r[size] for r in per_side["plain"]]
            pre = [r[size] for r in per_side["preloaded"]]
            ratios = [a / b for a, b in zip(plain, pre) if b > 0]
            mp, mc = statistics.median(plain), statistics.median(pre)
            print(f"{size:>9}{mp:>11.2f}{mc:>12.2f}{mp / mc:>8.2f}  {min(ratios):.2f}-{max(ratios):.2f}")
            for impl, values in (("mpi", plain), ("cachecomm", pre)):
                results.append({"op": op, "impl": impl, "algorithm": "preload" if impl == "cachecomm" else "default",
                                "mpi_library": mpi, "bytes": size, "iters": len(values),
                                "median_us": statistics.median(values), "min_us": min(values),
                                "p25_us": statistics.quantiles(values, n=4, method="inclusive")[0] if len(values) > 1 else values[0],
                                "p75_us": statistics.quantiles(values, n=4, method="inclusive")[2] if len(values) > 1 else values[0],
                                "buffers": "hot", "timing": "back-to-back" if op.startswith("b2b-") else "per-call",
                                "benchmark": op if op.startswith("b2b-") else f"osu_{op}"})
if failed:
    print("\nruns that printed no results (see OSU's output):", ", ".join(failed))
if out:
    json.dump({"tool": "osu_compare.sh", "suite": "osu", "machine": {"host": socket.gethostname(), "cpu": cpu, "cores": cores},
               "np": np, "oversubscribed": np > cores, "results": results}, open(out, "w"), indent=1)
PY
