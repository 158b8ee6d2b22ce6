"""Session 20: medians per (op, bytes, variant) of osu_variants.sh / mpis_table.sh output, with the
range over rounds and plain / variant (x > 1: the variant is faster than plain).
Usage: variants_median.py OUT.txt"""
import sys,statistics as st,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)==5: d[(p[1],int(p[2]),p[0])].append(float(p[4]))
keys=sorted(set((k[0],k[1]) for k in d)); names=sorted(set(k[2] for k in d))
for op,s in keys:
    base=st.median(d[(op,s,'plain')]) if (op,s,'plain') in d else None
    row=f"{op} {s:>8}"
    for nm in names:
        v=d.get((op,s,nm))
        if v: row+=f" | {nm} {st.median(v):8.2f} [{min(v):.1f}-{max(v):.1f}]" + (f" x{base/st.median(v):.2f}" if base and nm!='plain' else "")
    print(row)
