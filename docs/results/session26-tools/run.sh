# run.sh MPI [env K=V...] -- program args : one preloaded run with the summary
cd /work/main; root=/work/main; peers=/opt/mpi-peers; np=${NP:-2}; bind=core
source bench/peers/mpis.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
m=$1; shift; e=(); P=$(preload_of $m)
while [ "$1" != "--" ]; do if [ $m = impi ]; then e+=(-genv ${1%%=*} ${1#*=}); else e+=(-x $1); fi; shift; done; shift
if [ $m = impi ]; then e+=(-genv LD_PRELOAD $P); else e+=(-x LD_PRELOAD=$P); fi
$(launcher $m) "${e[@]}" "$@"
