# shellcheck shell=bash disable=SC2154  # np, bind, peers, root: the sourcing script's
# Sourced by the peer comparisons (osu_compare.sh, imb_compare.sh): how to launch each MPI that
# ../shared/peers/mpi-peers.sh installs (and the system MPI), and where its preload is built.
# Needs: root (the repository), peers (the peers' prefix), np, bind (core|none).

launcher() {  # the launcher command line for one MPI, np ranks (Intel's own IMB binaries find libmpi
  # only through LD_LIBRARY_PATH)
  case "$1" in
    system) echo "mpirun -np $np --oversubscribe --bind-to $bind" ;;
    ompi5) echo "$peers/ompi5/bin/mpirun -np $np --oversubscribe --bind-to $bind" ;;
    mpich5) echo "$peers/mpich5/bin/mpiexec -np $np -bind-to $bind" ;;
    impi) echo "env PATH=$peers/impi/bin:$PATH LD_LIBRARY_PATH=$peers/impi/lib I_MPI_ROOT=$peers/impi I_MPI_FABRICS=shm $peers/impi/bin/mpirun -n $np -host localhost -ppn $np" ;;
    *) echo "unknown MPI $1" >&2; exit 2 ;;
  esac
}
preload_of() {
  case "$1" in
    system) echo "$root/build/release/src/preload/libcachecomm_mpi.so" ;;
    *) echo "$root/build/mpi-$1/src/preload/libcachecomm_mpi.so" ;;
  esac
}
mpicc_of() {
  case "$1" in
    system) echo mpicc ;;
    impi) echo "env I_MPI_ROOT=$peers/impi $peers/impi/bin/mpicc" ;;
    *) echo "$peers/$1/bin/mpicc" ;;
  esac
}
