#!/usr/bin/env bash
# The main job: measure this node and compare cachecomm with the system MPI on all local cores.
set -euo pipefail
np=${1:-$(nproc)}
out=${2:-out}
mkdir -p "$out"
bin=build/release
mpirun=(mpirun --oversubscribe -np "$np")
echo "== cachecomm-info ($np ranks) =="
"${mpirun[@]}" "$bin/apps/cachecomm-info"
echo
echo "== barrier and cache-line probe: cachecomm beside $(mpirun --version | head -1) =="
"${mpirun[@]}" "$bin/bench/cachecomm-bench" coll --op barrier,line-contention --json "$out/coll-barrier.json"
echo
echo "JSON results are in $out/"
