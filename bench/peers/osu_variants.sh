#!/bin/bash
# A/B of builds and settings under one MPI: one OSU 7.4 benchmark, every variant once per round,
# in alternating order (the VM's speed changes from one minute to the next: only interleaved
# rounds compare anything), then each variant's median (min-max) and its ratio to plain MPI per
# round.
#
# osu_variants.sh MPI OSU_OP ROUNDS MIN:MAX VARIANT...
#   MPI: system | ompi5 | mpich5 | impi (bench/peers/mpis.sh);  OSU_OP: bcast, iallreduce, ...
#   VARIANT: plain (no preload) | auto (the preload, defaults) | ENV=VAL[,ENV=VAL] (the preload
#            with those settings) | before (the preload in $BEFORE: its libcachecomm_mpi.so, and
#            the libcachecomm.so.0.2 beside it first on LD_LIBRARY_PATH; e.g. a copy of the
#            build a change starts from)
# Environment: ITERS (OSU -i, 200), NP (2), BIND (core), OUT (/tmp/osu-variants: the raw
# outputs), BEFORE, PEERS (/opt/mpi-peers).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export root=$(cd "$here/../.." && pwd) peers=${PEERS:-/opt/mpi-peers} np=${NP:-2} bind=${BIND:-core}
source "$here/mpis.sh"
(( $# >= 5 )) || { sed -n '2,15p' "$0"; exit 2; }
mpi=$1 op=$2 rounds=$3 range=$4; shift 4
kind=blocking; [[ $op == i* ]] && kind=non_blocking
osu=$peers/osu-$mpi/c/mpi/collective/$kind/osu_$op
[[ -x $osu ]] || { echo "osu_variants: no $osu (run ../shared/peers/mpi-peers.sh)" >&2; exit 1; }
out=${OUT:-/tmp/osu-variants}; mkdir -p "$out"; rm -f "$out"/*
for r in $(seq "$rounds"); do
  vs=("$@"); (( r % 2 )) || mapfile -t vs < <(printf '%s\n' "$@" | tac)
  for v in "${vs[@]}"; do
    envs=()
    if [[ $v == plain ]]; then
      $(launcher "$mpi") "$osu" -m "$range" -i "${ITERS:-200}" > "$out/$v.$r" 2>&1
      continue
    fi
    lib=$(preload_of "$mpi")
    if [[ $v == before ]]; then
      lib=${BEFORE:?before needs BEFORE=dir}/libcachecomm_mpi.so
      search=$BEFORE
      # Intel's programs find their libmpi only through LD_LIBRARY_PATH (mpis.sh).
      [[ $mpi == impi ]] && search+=":$peers/impi/lib"
      envs=(LD_LIBRARY_PATH="$search")
    elif [[ $v != auto ]]; then
      IFS=, read -ra envs <<< "$v"
    fi
    $(launcher "$mpi") env LD_PRELOAD="$lib" "${envs[@]}" "$osu" -m "$range" -i "${ITERS:-200}" \
      > "$out/$v.$r" 2>&1
  done
done
python3 - "$out" "$@" <<'PY'
import glob, re, statistics as st, sys
out, vs = sys.argv[1], sys.argv[2:]
def parse(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 2 and f[0].isdigit() and re.fullmatch(r'[\d.]+', f[1]):
            rows[int(f[0])] = float(f[1])
        elif len(f) == 1 and re.fullmatch(r'[\d.]+', f[0]):  # osu_barrier: one number
            rows[0] = float(f[0])
    return rows
def round_of(path):
    return int(path.rsplit('.', 1)[1])
data = {v: [parse(p) for p in sorted(glob.glob(f"{out}/{glob.escape(v)}.*"), key=round_of)] for v in vs}
sizes = sorted(set().union(*(d.keys() for runs in data.values() for d in runs)))
print("bytes   " + " ".join(f"{v[:22]:>22s}" for v in vs))
for s in sizes:
    cells = []
    for v in vs:
        xs = [d[s] for d in data[v] if s in d]
        cells.append(f"{st.median(xs):8.2f} ({min(xs):5.2f}-{max(xs):6.2f})" if xs else "")
    print(f"{s:7d} " + " ".join(f"{c:>22s}" for c in cells))
if 'plain' in vs:
    print("ratio plain / variant, per round: median (min-max)")
    for s in sizes:
        cells = []
        for v in vs:
            if v == 'plain':
                continue
            rs = [p[s] / q[s] for p, q in zip(data['plain'], data[v]) if s in p and s in q and q[s] > 0]
            if rs:
                cells.append(f"{v[:18]}: {st.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")
        print(f"{s:7d}  " + "  ".join(cells))
PY
