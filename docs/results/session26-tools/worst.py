# worst.py RESULTS.json: per MPI and benchmark of an osu_compare.sh run, the lowest plain/preloaded
# ratio of the medians and every size below 0.91 (the 1.10 tolerance).
import json,collections,sys
rows=json.load(open(sys.argv[1]))['results']
t=collections.defaultdict(dict)
for r in rows:
    t[(r['mpi_library'],r['benchmark'],r['bytes'])][r['impl']]=r['median_us']
worst=collections.defaultdict(list)
for (m,b,n),v in t.items():
    if 'mpi' in v and 'cachecomm' in v:
        worst[(m,b)].append((v['mpi']/v['cachecomm'],n))
for k in sorted(worst):
    w=sorted(worst[k])
    print('%-8s %-16s min %.2f at %-8d'%(k[0],k[1],w[0][0],w[0][1]), ' <0.91:', [ (round(a,2),n) for a,n in w if a<0.91])
