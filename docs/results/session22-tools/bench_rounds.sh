#!/usr/bin/env bash
# bench_rounds.sh NP ROUNDS OUTDIR -- cachecomm-bench coll args...: repeated runs with the state probe
np=$1; rounds=$2; out=$3; shift 4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  p=$(/tmp/p/xchg 32768 300 64 | head -1 | awk '{print $7}')
  mpirun --oversubscribe --bind-to none -np "$np" ${CACHECOMM_BUILD:-/work/main/build}/release/bench/cachecomm-bench coll --quiet --json "$out/r$r.json" "$@" >/dev/null 2>&1
  echo "$r $p" >> "$out/probes.txt"
done
