#!/bin/bash
# Session 21: rounds x {plain, before, after} x benchmarks under one MPI, 2 ranks, the order
# rotated per round; prints "variant bench size us round state" (state: region_exchange_probe's
# 32 KiB exchange in us, /tmp/p/xchg from session19-tools, ~2 usual, >4 the VM's slow state).
# "before" and "after" are copies of the build's libcachecomm.so* and libcachecomm_mpi.so* in
# /tmp/before-<mpi> and /tmp/after-<mpi> (sys: build/release, impi: build/mpi-impi).
# ab_rounds.sh sys|impi ROUNDS "benches" [MIN:MAX]   (benches: OSU names, or b2b-<op> for
# cachecomm-b2b-bench); sizes from $MIN (default 8192) are kept; summarize with ab_median.py.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=$1; rounds=$2; benches=$3; range=${4:-1:262144}
M=/opt/mpi-peers; W=/work/main
case $mpi in
  sys) launch="mpirun -np 2 --bind-to core"; build=release; osu=system
       preload() { echo "-x LD_LIBRARY_PATH=/tmp/$1-sys -x LD_PRELOAD=/tmp/$1-sys/libcachecomm_mpi.so"; } ;;
  impi) launch="env PATH=$M/impi/bin:$PATH I_MPI_ROOT=$M/impi I_MPI_FABRICS=shm $M/impi/bin/mpirun -n 2 -host localhost -ppn 2"
        build=mpi-impi; osu=impi
        preload() { echo "-genv LD_LIBRARY_PATH /tmp/$1-impi -genv LD_PRELOAD /tmp/$1-impi/libcachecomm_mpi.so"; } ;;
  *) echo "ab_rounds.sh: sys or impi" >&2; exit 2 ;;
esac
variants=(plain before after)
for r in $(seq 1 $rounds); do
  for b in $benches; do
    for k in 0 1 2; do
      v=${variants[$(( (k + r) % 3 ))]}
      pre=""; [ $v != plain ] && pre=$(preload $v)
      T=""; case $b in *reduce*) T="-T mpi_float";; esac
      case $b in
        b2b-*) cmd="$W/build/$build/bench/cachecomm-b2b-bench --op ${b#b2b-} -m $range";;
        *) cmd="$M/osu-$osu/c/mpi/collective/blocking/osu_$b -m $range $T";;
      esac
      st=$(/tmp/p/xchg 32768 300 64 | head -1 | awk '{print $7}')
      $launch $pre $cmd 2>/dev/null | awk -v v=$v -v b=$b -v r=$r -v st=$st \
        '/^[0-9]/ && $1>=(ENVIRON["MIN"] ? ENVIRON["MIN"] : 8192) {print v, b, $1, $2, r, st}'
    done
  done
done
