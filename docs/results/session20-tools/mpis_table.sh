#!/bin/bash
# Session 20 (issue 18's speed table). Needs build/mpi-{ompi5,mpich5,impi} (cachecomm-b2b-bench) and
# region_exchange_probe (session19-tools) built as /tmp/p/xchg for the state probe: its last field
# is a 32 KiB exchange through shared memory in us, ~2 in the VM's usual state, ~16 in its slow one.
# One size per launch, every MPI plain and cachecomm (preloaded under Open MPI 4.1) in one rotated
# order per round; the VM's state probed (32 KiB exchange) right before each launch.
# mpis_table.sh OUT ROUNDS "ops" "sizes"     ops: osu names (bcast...) or b2b-<op>
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$1; rounds=$2; ops=$3; sizes=$4; M=/opt/mpi-peers; W=/work/main
variants=(ompi41 ompi5 mpich5 impi cachecomm)
launch() {  # variant -> launcher prefix
  case $1 in
    ompi41|cachecomm) echo "mpirun -np 2 --bind-to core";;
    ompi5) echo "$M/ompi5/bin/mpirun -np 2 --bind-to core";;
    mpich5) echo "$M/mpich5/bin/mpiexec -np 2 -bind-to core";;
    impi) echo "env PATH=$M/impi/bin:$PATH I_MPI_ROOT=$M/impi I_MPI_FABRICS=shm $M/impi/bin/mpirun -n 2 -host localhost -ppn 2";;
  esac; }
binary() {  # variant op
  local d; case $1 in ompi41|cachecomm) d=system;; *) d=$1;; esac
  case $2 in
    b2b-*) case $1 in ompi41|cachecomm) echo "$W/build/release/bench/cachecomm-b2b-bench --op ${2#b2b-} -i 2000 --batches 11";; *) echo "$W/build/mpi-$1/bench/cachecomm-b2b-bench --op ${2#b2b-} -i 2000 --batches 11";; esac;;
    *) echo "$M/osu-$d/c/mpi/collective/blocking/osu_$2";;
  esac; }
: > $out
for r in $(seq 1 $rounds); do
  state=$(/tmp/p/xchg 32768 1000 64 | head -1 | awk '{print $7}')
  for op in $ops; do
    T=""; case $op in *reduce*) T="-T mpi_float";; esac
    szs=$sizes; [[ $op == *barrier* ]] && szs=0
    for s in $szs; do
      for k in 0 1 2 3 4; do
        v=${variants[$(( (k + r) % 5 ))]}
        pre=""; [ $v = cachecomm ] && pre="-x LD_PRELOAD=$W/build/release/src/preload/libcachecomm_mpi.so"
        m=""; [ $s != 0 ] && m="-m $s:$s"
        state=$(/tmp/p/xchg 32768 300 64 | head -1 | awk '{print $7}')
        res=$($(launch $v) $pre $(binary $v $op) $T $m 2>/dev/null | awk -v s=$s 's==0 && $1+0>0 {print $1; exit} s!=0 && $1==s {print $2}')
        echo "$v $op $s $r $res $state" >> $out
      done
    done
  done
done
