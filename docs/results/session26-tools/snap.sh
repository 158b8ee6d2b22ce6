# snap.sh NAME MPI: copy the build's libraries for MPI (system|impi|ompi5|mpich5) to /tmp/s26/NAME-MPI
d=/work/main/build/release; [ "$2" != system ] && d=/work/main/build/mpi-$2
mkdir -p /tmp/s26/$1-$2; cp -a $d/src/libcachecomm.so* $d/src/preload/libcachecomm_mpi.so* /tmp/s26/$1-$2/
