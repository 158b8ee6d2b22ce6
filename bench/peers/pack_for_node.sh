#!/usr/bin/env bash
# Packs what bench/peers/node_survey.sh needs on a node that has no MPI, no compiler and no network
# (the 16-core device of these sessions) into one folder of the checkout, to carry there:
#   peers.tar.xz   Open MPI 5 and MPICH 5 from ../shared/peers/mpi-peers.sh's prefix (their
#                  Python parts left out) and OSU 7.4's blocking collectives built against each
#   build/         the mpi-ompi5 and mpi-mpich5 builds' libraries and benchmark programs
#   lib/           Debian's libhwloc and libudev, which libcachecomm links
#
#   bench/peers/pack_for_node.sh [--peers /opt/mpi-peers] [--out .dev]
#
# Build the two builds first (make test-mpi MPI_HOME=/opt/mpi-peers/ompi5 builds build/mpi-ompi5;
# `make -C build/mpi-<name> cachecomm_mpi cachecomm-bench cachecomm-tune cachecomm-b2b-bench
# cachecomm-info` after a change). About 22 MB; list the folder in .git/info/exclude.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers=/opt/mpi-peers; out="$root/.dev"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --peers) peers="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "pack_for_node.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mpis=(ompi5 mpich5)
ops=(bcast reduce allreduce allgather barrier)
mkdir -p "$out/lib"
members=(env.sh)
for mpi in "${mpis[@]}"; do
  [[ -d "$peers/$mpi" ]] || { echo "no $peers/$mpi: run ../shared/peers/mpi-peers.sh" >&2; exit 2; }
  members+=("$mpi")
  for op in "${ops[@]}"; do members+=("osu-$mpi/c/mpi/collective/blocking/osu_$op"); done
done
tar -cJf "$out/peers.tar.xz" -C "$peers" --exclude='lib/python3*' --exclude='bin/python*' \
  --exclude='bin/pip*' "${members[@]}"
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
