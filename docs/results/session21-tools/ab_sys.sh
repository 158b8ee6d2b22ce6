#!/bin/bash
# Session 21: ab_impi.sh under the system MPI (Open MPI 4.1): /tmp/before-sys and /tmp/after-sys.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=$1; benches=$2; range=${3:-1:262144}
M=/opt/mpi-peers; W=/work/main
IM="mpirun -np 2 --bind-to core"
variants=(plain before after)
for r in $(seq 1 $rounds); do
  for b in $benches; do
    for k in 0 1 2; do
      v=${variants[$(( (k + r) % 3 ))]}
      pre=""; [ $v != plain ] && pre="-x LD_LIBRARY_PATH=/tmp/$v-sys -x LD_PRELOAD=/tmp/$v-sys/libcachecomm_mpi.so"
      T=""; case $b in *reduce*) T="-T mpi_float";; esac
      case $b in
        b2b-*) cmd="$W/build/release/bench/cachecomm-b2b-bench --op ${b#b2b-} -m $range";;
        *) cmd="$M/osu-system/c/mpi/collective/blocking/osu_$b -m $range $T";;
      esac
      st=$(/tmp/p/xchg 32768 300 64 | head -1 | awk '{print $7}')
      $IM $pre $cmd 2>/dev/null | awk -v v=$v -v b=$b -v r=$r -v st=$st '/^[0-9]/ && $1>=(ENVIRON["MIN"] ? ENVIRON["MIN"] : 8192) {print v, b, $1, $2, r, st}'
    done
  done
done
