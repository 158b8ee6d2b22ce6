#!/bin/bash
# Session 20: one size per launch, variants rotated every round, one line per launch appended to OUT
# ("variant op bytes round microseconds"; variants_median.py summarizes). OSU 7.4's programs
# (../shared/peers, built by mpi-peers.sh under /opt/mpi-peers) or, for b2b-<op>, the back-to-back
# loop bench/preload/back_to_back_bench.c.
# osu_variants.sh OUT ROUNDS NP OP "sizes" "variants"
#   variants: plain (the system MPI) | impi (Intel MPI plain) | before (preloaded from /tmp/before,
#   a copy of the library before a change) | NAME:ENV=V,ENV=V (preloaded under the
#   system MPI with those settings; NAME:- for none). E.g.
#   osu_variants.sh out.txt 6 4 reduce "262144 1048576" "plain auto:- gr:CACHECOMM_REDUCE=gather-reduce"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$1; rounds=$2; np=$3; op=$4; sizes=$5; variants=($6)
P=/work/main/build/release/src/preload/libcachecomm_mpi.so; S=/opt/mpi-peers/osu-system/c/mpi/collective/blocking; I=/opt/mpi-peers/osu-impi/c/mpi/collective/blocking
bind="--bind-to core"; [ $np -gt 2 ] && bind="--bind-to none --oversubscribe"
T=""; case $op in allreduce|reduce|b2b-allreduce|b2b-reduce) T="-T mpi_float";; esac
B=$S/osu_$op; BI=$I/osu_$op
case $op in b2b-*) B=/work/main/build/release/bench/cachecomm-b2b-bench; BI=/work/main/build/mpi-impi/bench/cachecomm-b2b-bench; T="--op ${op#b2b-}";; esac
n=${#variants[@]}
for r in $(seq 1 $rounds); do for s in $sizes; do for k in $(seq 0 $((n-1))); do
  spec=${variants[$(( (k + r) % n ))]}; name=${spec%%:*}; envs=${spec#*:}
  if [ "$name" = plain ]; then c="mpirun -np $np $bind $B";
  elif [ "$name" = before ]; then c="mpirun -np $np $bind -x LD_LIBRARY_PATH=/tmp/before -x LD_PRELOAD=/tmp/before/libcachecomm_mpi.so $B";
  elif [ "$name" = impi ]; then c="env PATH=/opt/mpi-peers/impi/bin:$PATH I_MPI_ROOT=/opt/mpi-peers/impi I_MPI_FABRICS=shm /opt/mpi-peers/impi/bin/mpirun -n $np -host localhost -ppn $np $BI";
  else x=""; for e in ${envs//,/ }; do [ "$e" = "-" ] || x="$x -x $e"; done
    c="mpirun -np $np $bind $x -x LD_PRELOAD=$P $B"; fi
  v=$($c $T -m $s:$s 2>/dev/null | awk -v s=$s '$1==s{print $2}')
  echo "$name $op $s $r $v" >> $out
done; done; done
