import collections,statistics,sys
d=collections.defaultdict(list); order=[]
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)!=4: continue
    r,v,s,t=p; d[(v,int(s))].append(float(t))
    if v not in order: order.append(v)
sizes=sorted({k[1] for k in d}); base=order[0]
print("size " + " ".join(f"{v:>9}" for v in order) + "   ratios " + base + "/x (min-max)")
for s in sizes:
    m={v:statistics.median(d[(v,s)]) for v in order if d[(v,s)]}
    rs=[]
    for v in order[1:]:
        pr=[a/b for a,b in zip(d[(base,s)],d[(v,s)])]
        rs.append(f"{m[base]/m[v]:.2f}({min(pr):.2f}-{max(pr):.2f})")
    print(f"{s:>8} " + " ".join(f"{m[v]:9.2f}" for v in order) + "   " + " ".join(rs))
