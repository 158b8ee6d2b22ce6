# Session 25 (MPICH 5's -genv: session 27): one OSU-style program under one MPI (system|impi|ompi5|mpich5), several variants in
# interleaved rounds; prints "round variant bytes us" rows for variants.py (medians, ratios to the
# first variant with their spread over rounds).
# usage: [COL=n: the output's column, 2 by default] [NP=ranks] [BIND=core|none] variants.sh MPI ROUNDS "program args" name=spec ...
#   spec: plain (no preload) | pre (the build's preload) | K=V[,K=V...] (the preload with settings)
#         | @DIR[,K=V...] (the preload copied to DIR: libcachecomm.so* and libcachecomm_mpi.so*)
root="$(cd "$(dirname "$0")/../../.." && pwd)"
source "$root/bench/peers/mpis.sh"; np=${NP:-2}; bind=${BIND:-core}; peers=/opt/mpi-peers
m=$1; rounds=$2; args=$3; shift 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
L=$(launcher $m); P=$(preload_of $m)
for r in $(seq $rounds); do for spec in "$@"; do name=${spec%%=*}; envs=${spec#*=}; e=()
  if [ "$envs" != plain ]; then
    lib=$P; libdir=""
    if [[ "$envs" == @* ]]; then libdir=${envs%%,*}; libdir=${libdir#@}; lib=$libdir/libcachecomm_mpi.so
      if [[ "$envs" == *,* ]]; then envs=${envs#*,}; else envs=pre; fi; fi
    if [ $m = impi -o $m = mpich5 ]; then e=(-genv LD_PRELOAD $lib); else e=(-x LD_PRELOAD=$lib); fi
    if [ -n "$libdir" ]; then case $m in impi) e+=(-genv LD_LIBRARY_PATH $libdir:$peers/impi/lib);;
      mpich5) e+=(-genv LD_LIBRARY_PATH $libdir);; *) e+=(-x LD_LIBRARY_PATH=$libdir);; esac; fi
    [ "$envs" = pre ] || for kv in ${envs//,/ }; do if [ $m = impi -o $m = mpich5 ]; then e+=(-genv ${kv%%=*} ${kv#*=}); else e+=(-x $kv); fi; done
  fi
  $L "${e[@]}" $args | awk -v v=$name -v r=$r -v c=${COL:-2} '/^[0-9]/{print r, v, $1, $c} /^ +[0-9.]+$/ && NF==1 {print r, v, 0, $1}'
done; done
