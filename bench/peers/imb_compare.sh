#!/usr/bin/env bash
# Intel MPI Benchmarks (IMB-MPI1, IMB-NBC), plain and preloaded, under each MPI installed by
# ../shared/peers/mpi-peers.sh (and the system MPI), in interleaved rounds: for every round, every MPI,
# every buffer mode, the plain and the preloaded run back to back (their order alternating by round).
# Prints, per MPI, benchmark, buffer mode and message size, the median over rounds of IMB's t_avg
# (t for the ping-pongs) plain and preloaded, the ratio plain / preloaded (> 1: the preload is
# faster) with its spread, and writes the rows as JSON (../shared/conventions/benchmarks.md).
#
# IMB differs from OSU where it matters to a preload: it reports the average over ranks (OSU too)
# of per-call times with a barrier after every call, runs every size of every benchmark in one
# process (the online selection sees them all in turn), and with --buffers cold passes
# -off_cache -1: every call on a buffer that is out of the last-level cache.
#
# imb_compare.sh [--mpis system,impi] [--np 2] [--rounds 5] [--suite MPI1|NBC]
#                [--benchmarks Bcast,Reduce,Allreduce,Allgather,Barrier] [--buffers hot|cold|both]
#                [--iters 1000] [--time 1] [--max-log 22] [--bind core|none] [--json FILE]
#                [--imb-src DIR] [--peers /opt/mpi-peers]
#
# IMB itself: Intel MPI ships IMB-MPI1 and IMB-NBC (peers/impi/bin). For any other MPI, build them
# from Intel's source (github.com/intel/mpi-benchmarks) with that MPI's mpicc, once:
#   make -C <src>/src_c -f Makefile CC=<mpicc> TARGET=MPI1   (and TARGET=NBC)
# and put the binaries in <peers>/imb-<mpi>/; --imb-src <src> does that for every MPI that lacks them.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mpis="system,impi"; np=2; rounds=5; suite=MPI1; benchmarks="Bcast,Reduce,Allreduce,Allgather,Barrier"
buffers=hot; iters=1000; time_s=1; max_log=22; bind=""; json=""; imb_src=""; peers=/opt/mpi-peers
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpis) mpis="$2"; shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --suite) suite="$2"; shift 2 ;;
    --benchmarks) benchmarks="$2"; shift 2 ;;
    --buffers) buffers="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --time) time_s="$2"; shift 2 ;;
    --max-log) max_log="$2"; shift 2 ;;
    --bind) bind="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    --imb-src) imb_src="$2"; shift 2 ;;
    --peers) peers="$2"; shift 2 ;;
    *) echo "imb_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -z "$bind" ]]; then bind=core; [[ "$np" -gt "$(nproc)" ]] && bind=none; fi
# shellcheck source=bench/peers/mpis.sh
source "$root/bench/peers/mpis.sh"
imb_of() {  # IMB-<suite> for one MPI
  if [[ "$1" == impi ]]; then echo "$peers/impi/bin/IMB-$suite"; else echo "$peers/imb-$1/IMB-$suite"; fi
}

IFS=, read -r -a mpi_list <<<"$mpis"
case "$buffers" in hot) modes=(hot) ;; cold) modes=(cold) ;; both) modes=(hot cold) ;;
  *) echo "imb_compare.sh: --buffers is hot, cold or both, not $buffers" >&2; exit 2 ;; esac
for mpi in "${mpi_list[@]}"; do
  [[ -f "$(preload_of "$mpi")" ]] || { echo "no preload for $mpi: $(preload_of "$mpi") (see osu_compare.sh)" >&2; exit 2; }
  if [[ ! -x "$(imb_of "$mpi")" && -n "$imb_src" ]]; then
    build=$(mktemp -d); cp -r "$imb_src/src_c" "$build/"
    make -C "$build/src_c" -f Makefile CC="$(mpicc_of "$mpi")" TARGET="$suite" >"$build/make.log" 2>&1 ||
      { echo "building IMB-$suite for $mpi failed: $build/make.log" >&2; exit 2; }
    mkdir -p "$(dirname "$(imb_of "$mpi")")"; cp "$build/src_c/IMB-$suite" "$(imb_of "$mpi")"; rm -rf "$build"
  fi
  [[ -x "$(imb_of "$mpi")" ]] || { echo "no IMB-$suite for $mpi at $(imb_of "$mpi") (see the header)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
imb_args=(-npmin "$np" -iter "$iters" -time "$time_s" -mem 2 -msglog "0:$max_log")
for round in $(seq 1 "$rounds"); do
  for mpi in "${mpi_list[@]}"; do
    for mode in "${modes[@]}"; do
      cache_args=(); [[ "$mode" == cold ]] && cache_args=(-off_cache -1)
      for side in $( ((round % 2)) && echo "plain preloaded" || echo "preloaded plain"); do
        preload=(); [[ "$side" == preloaded ]] && preload=(env LD_PRELOAD="$(preload_of "$mpi")")
        # shellcheck disable=SC2046,SC2086  # the launcher's words; the benchmark names
        $(launcher "$mpi") "${preload[@]}" "$(imb_of "$mpi")" "${imb_args[@]}" "${cache_args[@]}" \
          ${benchmarks//,/ } >"$work/$mpi.$mode.$side.$round" 2>&1 || true
      done
      echo "round $round/$rounds: $mpi IMB-$suite $mode done" >&2
    done
  done
done

PYTHONPATH="$root/bench/peers" python3 - "$work" "$np" "$rounds" "$json" "$mpis" "$suite" "${modes[*]}" <<'PY'
import glob, os, re, sys
from compare_report import compare, write_json
work, np, rounds, out, mpis, suite, modes = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4],
                                             sys.argv[5].split(","), sys.argv[6], sys.argv[7].split())
def parse(path):
    """{benchmark: {bytes: us}} from IMB's tables: the column t_avg[usec], or t[usec] (ping-pongs),
    or t_pure[usec] (IMB-NBC: the call with no computation to overlap); a barrier's one row is 0 B."""
    tables, bench, column = {}, None, None
    for line in open(path, errors="replace"):
        m = re.match(r"# Benchmarking (\S+)", line)
        if m:
            bench, column = m.group(1), None
            continue
        fields = line.split()
        if fields and fields[0] in ("#bytes", "#repetitions"):
            for want in ("t_pure[usec]", "t_avg[usec]", "t[usec]"):
                if want in fields:
                    column, has_bytes = fields.index(want), fields[0] == "#bytes"
                    break
            continue
        if bench and column is not None and len(fields) > column and all(re.fullmatch(r"[\d.]+", f) for f in fields):
            tables.setdefault(bench, {})[int(fields[0]) if has_bytes else 0] = float(fields[column])
    return tables
cores = os.cpu_count()
print(f"IMB-{suite}, {np} ranks on {cores} cores{' (oversubscribed)' if np > cores else ''}, {rounds} interleaved rounds;"
      " medians over rounds of IMB's t_avg; ratio = plain / preloaded (> 1: preload faster)")
results, failed = [], []
for mpi in mpis:
    for mode in modes:
        runs = {side: [parse(p) for p in sorted(glob.glob(f"{work}/{mpi}.{mode}.{side}.*"))]
                for side in ("plain", "preloaded")}
        failed += [f"{mpi} {mode} {side}" for side, r in runs.items() if any(not t for t in r)]
        benches = sorted(set().union(*(set(t) for side in runs.values() for t in side)))
        for bench in benches:
            plain = [t[bench] for t in runs["plain"] if bench in t]
            pre = [t[bench] for t in runs["preloaded"] if bench in t]
            if not plain or not pre:
                failed.append(f"{mpi} {mode} {bench}")
                continue
            results += compare(f"{mpi} IMB {bench}, {mode} buffers", plain, pre,
                               {"op": bench.lower(), "mpi_library": mpi, "buffers": mode, "timing": "per-call",
                                "benchmark": f"IMB-{suite} {bench}"})
if failed:
    print("\nruns that printed no results (see IMB's output):", ", ".join(failed))
write_json(out, "imb_compare.sh", "imb", np, results)
PY
