#!/bin/bash
# One size per launch, variants rotated per round: plain Open MPI 4.1, preloaded before/after, Intel MPI plain.
# osu_fine.sh OUT ROUNDS "ops" "sizes" "variants" [np]
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$1; rounds=$2; ops=$3; sizes=$4; variants=$5; np=${6:-2}
W=/work/main; S=/opt/mpi-peers/osu-system/c/mpi/collective/blocking; I=/opt/mpi-peers/osu-impi/c/mpi/collective/blocking
bind="--bind-to core"; [ $np -gt 2 ] && bind="--bind-to none --oversubscribe"
: > $out
for r in $(seq 1 $rounds); do
  vs=($variants); n=${#vs[@]}
  for op in $ops; do
    T=""; case $op in allreduce|reduce|reduce_scatter_block) T="-T mpi_float";; esac
    for s in $sizes; do
      for k in $(seq 0 $((n-1))); do
        v=${vs[$(( (k + r) % n ))]}
        case $v in
          plain) cmd="mpirun -np $np $bind $S/osu_$op";;
          before) cmd="mpirun -np $np $bind -x LD_LIBRARY_PATH=/tmp/before -x LD_PRELOAD=/tmp/before/libcachecomm_mpi.so $S/osu_$op";;
          after) cmd="mpirun -np $np $bind -x LD_PRELOAD=$W/build/release/src/preload/libcachecomm_mpi.so $S/osu_$op";;
          impi) cmd="env PATH=/opt/mpi-peers/impi/bin:$PATH I_MPI_ROOT=/opt/mpi-peers/impi I_MPI_FABRICS=shm /opt/mpi-peers/impi/bin/mpirun -n $np -host localhost -ppn $np $I/osu_$op";;
        esac
        val=$($cmd $T -m $s:$s -i 1000 -x 200 2>/dev/null | awk -v s=$s '$1==s {print $2}')
        echo "$v $op $s $r $val" >> $out
      done
    done
  done
done
