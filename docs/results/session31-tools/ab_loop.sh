# usage: [NB_LOOP=path] ab_loop.sh ROUNDS NP "nb_loop args" plain|dir...  (nb_loop args: calls bytes mode [multiple])   (prints median us per variant of the last rep line)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$1; NP=$2; A=$3; shift 3
for r in $(seq $R); do for d in "$@"; do
  if [ $d = plain ]; then v=$(mpirun --oversubscribe -np $NP ${NB_LOOP:-./nb_loop} $A | tail -1 | awk '{print $5}')
  else v=$(mpirun --oversubscribe -np $NP -x LD_PRELOAD=$d/libcachecomm_mpi.so -x LD_LIBRARY_PATH=$d ${NB_LOOP:-./nb_loop} $A | tail -1 | awk '{print $5}'); fi
  echo "$d $v"; done; done | python3 -c '
import sys,statistics as s,collections
d=collections.defaultdict(list)
for l in sys.stdin: k,v=l.split(); d[k].append(float(v))
for k,v in d.items(): print(f"{k:16s} median {s.median(v):.3f}  min {min(v):.3f} max {max(v):.3f}")'
