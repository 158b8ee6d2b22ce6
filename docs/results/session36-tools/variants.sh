#!/bin/bash
# variants.sh MPI OSU_OP ROUNDS "MIN:MAX" VARIANT... ; VARIANT: plain | auto | ENV=VAL[,ENV=VAL]
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 root=/work/main peers=/opt/mpi-peers np=${NP:-2} bind=${BIND:-core}
source /work/main/bench/peers/mpis.sh
mpi=$1 op=$2 rounds=$3 range=$4; shift 4
kind=blocking; [[ $op == i* ]] && kind=non_blocking
osu=$peers/osu-$mpi/c/mpi/collective/$kind/osu_$op
out=${OUT:-/tmp/s36/var}; mkdir -p $out; rm -f $out/*
for r in $(seq $rounds); do
  vs=("$@"); (( r % 2 )) || vs=($(printf '%s\n' "$@" | tac))
  for v in "${vs[@]}"; do
    if [[ $v == plain ]]; then $(launcher $mpi) $osu -m $range -i ${ITERS:-200} > $out/$v.$r 2>&1
    else envs=(); lib=$(preload_of $mpi); [[ $v != auto && $v != before ]] && IFS=, read -ra envs <<< "$v"
      [[ $v == before ]] && lib=/tmp/s36/before/libcachecomm_mpi-$mpi.so
      $(launcher $mpi) env LD_PRELOAD=$lib "${envs[@]}" $osu -m $range -i ${ITERS:-200} > $out/$v.$r 2>&1; fi
  done
done
python3 - $out "$@" <<'PY'
import sys,glob,statistics as st,re
out=sys.argv[1]; vs=sys.argv[2:]
def parse(p):
    d={}
    for l in open(p):
        f=l.split()
        if len(f)>=2 and f[0].isdigit() and re.fullmatch(r'[\d.]+',f[1]): d[int(f[0])]=float(f[1])
        elif len(f)==1 and re.fullmatch(r'[\d.]+',f[0]): d[0]=float(f[0])
    return d
data={v:[parse(p) for p in sorted(glob.glob(f"{out}/{v}.*"))] for v in vs}
sizes=sorted(data[vs[0]][0])
print("bytes "+" ".join(f"{v[:22]:>22s}" for v in vs))
for s in sizes:
    row=[]
    for v in vs:
        xs=[d[s] for d in data[v] if s in d]
        row.append(f"{st.median(xs):8.2f} ({min(xs):5.2f}-{max(xs):6.2f})" if xs else " "*22)
    print(f"{s:7d} "+" ".join(f"{c:>22s}" for c in row))
if 'plain' in vs:
    print("ratio plain/variant per round, median (min-max)")
    for s in sizes:
        cells=[]
        for v in vs:
            if v=='plain': continue
            rs=[p[s]/q[s] for p,q in zip(data['plain'],data[v]) if s in p and s in q]
            cells.append(f"{v[:18]}: {st.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")
        print(f"{s:7d}  "+"  ".join(cells))
PY
