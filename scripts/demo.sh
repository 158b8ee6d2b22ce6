#!/usr/bin/env bash
# The main job: characterize this node, compare every cachecomm operation with the system MPI on
# all local cores, run the Laplace solver with its time breakdown, and draw the report.
set -euo pipefail
np=${1:-$(nproc)}
out=${2:-out}
mkdir -p "$out"
bin=build/release
mpirun=(mpirun --oversubscribe -np "$np")
mpi_name=$(mpirun --version 2>&1 | head -1)

step() { printf '\n== %s ==\n' "$*"; }

step "cachecomm-info ($np ranks)"
"${mpirun[@]}" "$bin/apps/cachecomm-info"

step "node characterization: limits, pingpong, bandwidth, threads, io (cachecomm beside $mpi_name)"
"${mpirun[@]}" "$bin/bench/cachecomm-bench" all --json "$out/node.json"

step "collectives: barrier, broadcast, reduce, allreduce, allgather (cachecomm beside $mpi_name)"
"${mpirun[@]}" "$bin/bench/cachecomm-bench" coll --op barrier,bcast,allreduce,reduce,allgather \
  --sizes 8,4096,65536,1048576 --batches 15 --iters 50 --json "$out/coll.json"

step "one-sided windows: PSCW synchronization and puts (cachecomm beside $mpi_name)"
"${mpirun[@]}" "$bin/bench/cachecomm-bench" pscw --quick --json "$out/pscw.json"

step "communication cache: small remote writes coalesced (MPI path and within the node)"
"${mpirun[@]}" "$bin/bench/cachecomm-bench" coalesce --quick --json "$out/coalesce.json"

step "preload library: an unmodified MPI program with and without libcachecomm_mpi.so"
bash bench/preload/run_preload_bench.sh --np "$np" --rounds 2 --build "$bin" --json "$out/preload.json"

step "Laplace solver, shared-memory halos beside plain MPI point-to-point"
"${mpirun[@]}" "$bin/apps/cachecomm-laplace" --local-size 2048 --iterations 50 --transport shm,mpi \
  --stream-elements 5000000 --json "$out/laplace.json"

step "report"
"$bin/tools/cachecomm-report" "$out"/*.json -o "$out/report"
echo
echo "JSON results: $out/*.json"
echo "Report page:  $out/report/index.html (plots beside it)"
