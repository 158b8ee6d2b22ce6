#!/usr/bin/env bash
# A time-boxed survey of a many-core node, for a node lent for minutes (the 16-core device of these
# sessions): OSU plain against preloaded under Open MPI 5 and MPICH 5, cachecomm-bench coll (every
# algorithm beside MPI, hot and cold, per call and back to back), the small-message algorithms at
# several rank counts, and the tuner. Phases run in order of value, each cut at its share of the
# budget; everything lands in OUT/results.tgz after every phase, so a run stopped at its limit keeps
# what it finished. docs/results/session15.md shows what came of it.
#
#   bench/peers/node_survey.sh [--budget 540] [--carried .dev] [--out $OUT] [--plan survey|mpis]
#                              [--rounds 2]
#
# --plan survey (the default): the above. --plan mpis: the strongest MPI on the node, the final
# build against each: OSU plain and preloaded under Intel MPI, Open MPI 5 and MPICH 5, the three
# MPIs interleaved round by round (--rounds), then the same at half the ranks as time allows.
#
# Run from the checkout's root. Where /opt/mpi-peers is missing it is unpacked from the folder
# bench/peers/pack_for_node.sh filled (--carried), and so are the builds. Merge a phase's rounds
# with bench/peers/merge_rounds.py.
set -u
root=$(pwd)
budget=540; carried=.dev; final=${OUT:-/tmp/node-survey}; plan=survey; rounds=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) budget="$2"; shift 2 ;;
    --carried) carried="$2"; shift 2 ;;
    --out) final="$2"; shift 2 ;;
    --plan) plan="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "node_survey.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$final"
out=$(mktemp -d)
t0=$SECONDS
say() { echo "== $* (at $((SECONDS - t0)) s)"; }
bundle() { tar -czf "$final/results.tgz" -C "$out" .; }
phase() { # name seconds command...: at most min(seconds, what is left of the budget)
  local name=$1 want=$2; shift 2
  local have=$((budget - (SECONDS - t0) - 5))
  ((have < want)) && want=$have
  if ((want < 10)); then say "skip $name: no time left"; return; fi
  say "start $name (at most $want s)"
  timeout -k 5 "$want" "$@" >"$out/$name.txt" 2>&1
  say "end $name, exit status $?"
  tail -3 "$out/$name.txt"
  bundle
}

if [[ ! -d /opt/mpi-peers/ompi5 ]]; then
  mkdir -p /opt/mpi-peers
  tar -xJf "$carried/peers.tar.xz" -C /opt/mpi-peers ||
    python3 -c "import tarfile, sys; tarfile.open(sys.argv[1]).extractall('/opt/mpi-peers')" \
      "$carried/peers.tar.xz"
fi
[[ -d build/mpi-ompi5 ]] || { mkdir -p build && cp -a "$carried/build/." build/; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1
export root out carried
# Each build finds its own libcachecomm (the binaries' run path names this machine's checkout).
library_path() { echo "$root/build/mpi-$1/src:$root/$carried/lib"; }
launch() { # mpi np program...
  local mpi=$1 np=$2; shift 2
  case $mpi in
    ompi5) /opt/mpi-peers/ompi5/bin/mpirun -np "$np" --bind-to core "$@" ;;
    mpich5) /opt/mpi-peers/mpich5/bin/mpiexec -np "$np" -bind-to core "$@" ;;
    impi) PATH=/opt/mpi-peers/impi/bin:$PATH I_MPI_ROOT=/opt/mpi-peers/impi I_MPI_FABRICS=shm \
      /opt/mpi-peers/impi/bin/mpirun -n "$np" \
      -host localhost -ppn "$np" "$@" ;;  # Intel MPI pins each rank to a core by default
  esac
}
osu() { # mpi np rounds max-size: OSU's five and the back-to-back loop, one JSON per round
  local mpi=$1 np=$2 rounds=$3 max=$4 round
  for round in $(seq 1 "$rounds"); do
    LD_LIBRARY_PATH=$(library_path "$mpi") bench/peers/osu_compare.sh --mpis "$mpi" --np "$np" \
      --rounds 1 --first-round "$round" --iters 100 --max-size "$max" --bind core \
      --ops bcast,reduce,allreduce,allgather,barrier,b2b-bcast,b2b-allreduce \
      --json "$out/osu-$mpi-np$np-r$round.json" || return
  done
}
coll() { # np json args...
  local np=$1 json=$2; shift 2
  LD_LIBRARY_PATH=$(library_path ompi5) launch ompi5 "$np" build/mpi-ompi5/bench/cachecomm-bench coll \
    "$@" --json "$out/$json"
}
osu_interleaved() { # np rounds max-size mpi...: round by round, every MPI in turn
  local np=$1 rounds=$2 max=$3 round mpi; shift 3
  for round in $(seq 1 "$rounds"); do
    for mpi in "$@"; do
      LD_LIBRARY_PATH=$(library_path "$mpi") bench/peers/osu_compare.sh --mpis "$mpi" --np "$np" \
        --rounds 1 --first-round "$round" --iters 100 --max-size "$max" --bind core \
        --ops bcast,reduce,allreduce,allgather,barrier,b2b-bcast,b2b-allreduce \
        --json "$out/osu-$mpi-np$np-r$round.json"
    done
  done
}
export -f library_path launch osu coll osu_interleaved

{ lscpu; nproc; free -g; df -h /dev/shm; uname -a; } >"$out/node.txt" 2>&1
cores=$(nproc); np=$((cores < 16 ? cores : 16)); half=$((np / 2))
say "node: $cores cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
LD_LIBRARY_PATH=$(library_path ompi5) build/mpi-ompi5/apps/cachecomm-info >"$out/info.txt" 2>&1
if [[ "$plan" == mpis ]]; then
  phase smoke-impi 30 bash -c "LD_LIBRARY_PATH=\$(library_path impi) launch impi $np env \
    LD_PRELOAD=$root/build/mpi-impi/src/preload/libcachecomm_mpi.so CACHECOMM_PRELOAD_SUMMARY=1 \
    /opt/mpi-peers/osu-impi/c/mpi/collective/blocking/osu_allreduce -m 1:1048576 -i 50"
  phase osu-np$np $((budget * 3 / 4)) bash -c "osu_interleaved $np $rounds 4194304 impi ompi5 mpich5"
  phase osu-np$half 9999 bash -c "osu_interleaved $half $rounds 4194304 impi ompi5 mpich5"
  say "done"
  bundle
  rm -rf "$out"
  exit 0
fi
phase smoke 30 bash -c "LD_LIBRARY_PATH=\$(library_path ompi5) launch ompi5 $np env \
  LD_PRELOAD=$root/build/mpi-ompi5/src/preload/libcachecomm_mpi.so CACHECOMM_PRELOAD_SUMMARY=1 \
  /opt/mpi-peers/osu-ompi5/c/mpi/collective/blocking/osu_allreduce -m 1:1048576 -i 50"
phase osu-ompi5-np$np 150 bash -c "osu ompi5 $np 3 4194304"
phase coll-np$np 130 bash -c "coll $np coll-np$np.json --op bcast reduce allreduce allgather barrier \
  --sizes 8 4096 32768 262144 1048576 4194304 --buffers hot cold --timing per-call back-to-back \
  --batches 7 --iters 20"
phase osu-mpich5-np$np 110 bash -c "osu mpich5 $np 3 4194304"
for n in 4 $half $np; do
  phase coll-small-np$n 25 bash -c "coll $n coll-small-np$n.json --op barrier bcast allreduce \
    --sizes 8 64 512 2048 --buffers hot --timing per-call back-to-back --batches 9 --iters 50"
done
phase osu-ompi5-np$half 80 bash -c "osu ompi5 $half 3 1048576"
phase tune-np$np 60 bash -c "LD_LIBRARY_PATH=\$(library_path ompi5) launch ompi5 $np \
  build/mpi-ompi5/bench/cachecomm-tune --step 4 --max-bytes 4194304 --batches 5 \
  -o $out/tuning-np$np.json"
phase osu-ompi5-np4 45 bash -c "osu ompi5 4 2 1048576"
phase osu-mpich5-np4 45 bash -c "osu mpich5 4 2 1048576"
say "done"
bundle
rm -rf "$out"
