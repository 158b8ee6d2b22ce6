#!/bin/bash
# Session 24: IMB-MPI1 under Intel MPI, 2 ranks: plain, /tmp/ab/before and /tmp/ab/after (each a
# copy of a build's libcachecomm_mpi.so and libcachecomm.so.0.2), the order rotated per round,
# hot and cold (-off_cache -1) buffers; summarize with imb_ab_summary.py OUT.
# rounds of: plain, before, after (rotating order) for IMB under Intel MPI
rounds=${ROUNDS:-5}; out=${OUT:-/tmp/ab/out}; mkdir -p $out; rm -f $out/*
B=${BENCH:-"Bcast Allgather Alltoall Alltoallv Gatherv Allreduce Reduce"}
for r in $(seq 1 $rounds); do
  for mode in hot cold; do
    cache=""; [ $mode = cold ] && cache="-off_cache -1"
    sides="plain before after"; [ $((r%3)) = 1 ] && sides="before after plain"; [ $((r%3)) = 2 ] && sides="after plain before"
    for side in $sides; do
      pre=""; lp=/opt/mpi-peers/impi/lib
      [ $side != plain ] && pre="env LD_PRELOAD=/tmp/ab/$side/libcachecomm_mpi.so" && lp=/tmp/ab/$side:/opt/mpi-peers/impi/lib
      env PATH=/opt/mpi-peers/impi/bin:$PATH LD_LIBRARY_PATH=$lp I_MPI_ROOT=/opt/mpi-peers/impi I_MPI_FABRICS=shm /opt/mpi-peers/impi/bin/mpirun -n 2 -host localhost -ppn 2 $pre /opt/mpi-peers/impi/bin/IMB-MPI1 -npmin 2 -iter 1000 -time 1 -mem 2 -msglog ${MSGLOG:-15:22} $cache $B > $out/$mode.$side.$r 2>&1
    done
  done
  echo "round $r done" >&2
done
