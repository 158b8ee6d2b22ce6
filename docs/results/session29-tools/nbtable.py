import json,sys
d=json.load(open(sys.argv[1]))
rows={}
for r in d['results']:
    k=(r['op'],r['bytes'],r['buffers']+'/'+r['timing'])
    rows.setdefault(k,{})[r['impl']]=r
modes=['cold/per-call','hot/per-call','hot/back-to-back']
ops=[]
for (op,b,m) in rows:
    if (op,b) not in ops: ops.append((op,b))
print('%-22s %8s' % ('op','bytes') + ''.join('%26s'%m for m in modes))
for op,b in ops:
    line='%-22s %8d' % (op,b)
    for m in modes:
        x=rows.get((op,b,m))
        if not x: line+='%26s'%'-'; continue
        mp=x['mpi']['corrected_median_us']; cc=x['cachecomm']['corrected_median_us']
        line+='%11.2f %6.2f  x%5.2f'%(mp,cc, mp/cc if cc>0 else 0)
    print(line)
