# Session 24: medians over rounds of imb_ab.sh's t_avg per benchmark, size and variant.
import glob,re,statistics,sys,collections
out=sys.argv[1]
def parse(path):
    t={}; bench=None; col=None
    for line in open(path,errors='replace'):
        m=re.match(r'# Benchmarking (\S+)',line)
        if m: bench=m.group(1); col=None; continue
        f=line.split()
        if f and f[0] in('#bytes','#repetitions'):
            col=f.index('t_avg[usec]') if 't_avg[usec]' in f else None; hb=f[0]=='#bytes'; continue
        if bench and col is not None and len(f)>col and all(re.fullmatch(r'[\d.]+',x) for x in f):
            t[(bench,int(f[0]) if hb else 0)]=float(f[col])
    return t
for mode in ('hot','cold'):
    runs={s:[parse(p) for p in sorted(glob.glob(f'{out}/{mode}.{s}.*'))] for s in ('plain','before','after')}
    keys=sorted(set().union(*[set(r) for r in runs['plain']]))
    print(f'\n{mode}: bench bytes plain before after | plain/before plain/after (medians; spread of plain/after)')
    for k in keys:
        v={s:[r[k] for r in runs[s] if k in r] for s in runs}
        if not all(v.values()): continue
        m={s:statistics.median(v[s]) for s in v}
        ra=[a/b for a,b in zip(v['plain'],v['after']) if b>0]
        flag = ' <' if m['plain']/m['after']<0.9 else ''
        print(f"{k[0]:>10} {k[1]:>8} {m['plain']:9.2f} {m['before']:9.2f} {m['after']:9.2f} | {m['plain']/m['before']:5.2f} {m['plain']/m['after']:5.2f} ({min(ra):.2f}-{max(ra):.2f}){flag}")
