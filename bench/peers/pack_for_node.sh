#!/usr/bin/env bash
# Packs what bench/peers/node_survey.sh needs on a node that has no MPI, no compiler and no network
# (the 16-core device of these sessions) into one folder of the checkout, to carry there:
#   peers.tar.xz   Open MPI 5, MPICH 5 and Intel MPI from ../shared/peers/mpi-peers.sh's prefix
#                  (their Python parts left out; of Intel MPI only what runs a job on one node's
#                  shared memory: the launcher, libmpi, libfabric's shm provider and the tuning
#                  files for generic and Emerald Rapids CPUs, stripped: 331 MB down to 6 MB packed)
#                  and OSU 7.4's blocking collectives built against each
#   build/         the mpi-<name> builds' libraries and benchmark programs
#   lib/           Debian's libhwloc and libudev, which libcachecomm links
#
#   bench/peers/pack_for_node.sh [--peers /opt/mpi-peers] [--out .dev] [--mpis ompi5,mpich5,impi]
#
# Build the builds first (make test-mpi MPI_HOME=/opt/mpi-peers/ompi5 builds build/mpi-ompi5;
# `make -C build/mpi-<name> cachecomm_mpi cachecomm-bench cachecomm-tune cachecomm-b2b-bench
# cachecomm-info` after a change). About 30 MB; list the folder in .git/info/exclude.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers=/opt/mpi-peers; out="$root/.dev"; mpis=(ompi5 mpich5 impi)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --peers) peers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --mpis) IFS=, read -r -a mpis <<<"$2"; shift 2 ;;
    *) echo "pack_for_node.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
ops=(bcast reduce allreduce allgather barrier)
mkdir -p "$out/lib"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$peers/env.sh" "$stage/"
for mpi in "${mpis[@]}"; do
  [[ -d "$peers/$mpi" ]] || { echo "no $peers/$mpi: run ../shared/peers/mpi-peers.sh" >&2; exit 2; }
  if [[ "$mpi" == impi ]]; then  # the shared-memory runtime only; copies of libmpi become links
    runtime=(bin/mpirun bin/mpiexec.hydra bin/hydra_pmi_proxy bin/hydra_bstrap_proxy bin/cpuinfo
      lib/libmpi.so.12 lib/libfabric.so.1 lib/libshm-fi.so opt/mpi/etc/collectives.conf
      opt/mpi/etc/pt2pt.conf opt/mpi/etc/tuning_generic_shm.dat opt/mpi/etc/tuning_emr_shm.dat)
    (cd "$peers" && cp -a --parents "${runtime[@]/#/impi/}" "$stage/")
    (cd "$stage/impi" && ln -s mpiexec.hydra bin/mpiexec && ln -s libmpi.so.12 lib/libmpi.so &&
      ln -s libfabric.so.1 lib/libfabric.so &&
      strip --strip-unneeded lib/libmpi.so.12 bin/mpiexec.hydra bin/hydra_pmi_proxy bin/hydra_bstrap_proxy)
  else
    (cd "$peers" && cp -a --parents "$mpi" "$stage/")
    rm -rf "$stage/$mpi"/lib/python3* "$stage/$mpi"/bin/python* "$stage/$mpi"/bin/pip*
  fi
  for op in "${ops[@]}"; do
    (cd "$peers" && cp -a --parents "osu-$mpi/c/mpi/collective/blocking/osu_$op" "$stage/")
  done
done
tar -cJf "$out/peers.tar.xz" -C "$stage" .
for mpi in "${mpis[@]}"; do
  from="$root/build/mpi-$mpi"; to="$out/build/mpi-$mpi"
  mkdir -p "$to/src/preload" "$to/bench" "$to/apps"
  cp -a "$from"/src/libcachecomm.so* "$to/src/"
  cp -a "$from"/src/preload/libcachecomm_mpi.so* "$to/src/preload/"
  for program in cachecomm-bench cachecomm-tune cachecomm-b2b-bench; do
    cp -a "$from/bench/$program" "$to/bench/"
  done
  cp -a "$from/apps/cachecomm-info" "$to/apps/"
done
for library in libhwloc.so.15 libudev.so.1; do
  cp -L "$(ldconfig -p | awk -v l="$library" '$1 == l {print $NF; exit}')" "$out/lib/"
done
du -sh "$out"
