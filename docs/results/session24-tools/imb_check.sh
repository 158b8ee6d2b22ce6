#!/bin/bash
# Session 24: IMB CHECK builds (IMBDIR: IMB-MPI1, IMB-NBC, IMB-EXT, IMB-RMA built with
# CFLAGS='-O2 -DCHECK' and the MPI's mpicc), plain and preloaded (the system MPI's build), at
# NPS ranks; outputs in OUTDIR, then imb_defects.py. IMB-NBC's Ireduce_scatter fails plain too
# (a 4-byte check error), so the NBC runs of the session name the other 12 benchmarks.
# IMB CHECK builds, plain and preloaded, np 1..4: report rc, defects and errors
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
P=/work/main/build/release/src/preload/libcachecomm_mpi.so
dir=${IMBDIR:-/tmp/imb/ompi41}
out=${OUTDIR:-/tmp/imb/out}; mkdir -p $out
for np in ${NPS:-1 2 3 4}; do for b in ${BENCHES:-IMB-MPI1 IMB-NBC IMB-EXT IMB-RMA}; do for side in plain pre; do
  pre=""; [ $side = pre ] && pre="-x LD_PRELOAD=$P -x CACHECOMM_PRELOAD_SUMMARY=1"
  s=$(date +%s)
  timeout ${TMO:-900} mpirun -np $np --oversubscribe --bind-to none $pre $dir/$b -iter 20 -time 0.5 -mem 1 -npmin $np > $out/${b}_${np}_$side.txt 2>&1
  rc=$?
  d=$(awk '/^#/{next} /defects/{c=1;next} c && NF>=4 && $NF+0>0 {n++} END{print n+0}' $out/${b}_${np}_$side.txt)
  echo "$b np$np $side rc=$rc defect_rows=$d $(( $(date +%s)-s ))s"
done; done; done
