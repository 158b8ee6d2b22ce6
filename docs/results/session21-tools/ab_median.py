# Session 21: medians per (bench, size, variant) of ab_rounds.sh output, samples in the
# slow state (probe > 4 us) left out; ratios plain/before, plain/after, before/after.
import sys, collections, statistics
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    v, b, s, us, r, st = line.split()
    if float(st) > 4: continue  # slow state
    d[(b, int(s), v)].append(float(us))
keys = sorted({(b, s) for (b, s, v) in d})
print(f"{'bench':16}{'size':>9}{'plain':>9}{'before':>9}{'after':>9}  plain/before plain/after before/after  n")
for b, s in keys:
    m = {v: statistics.median(d[(b, s, v)]) if d[(b, s, v)] else float('nan') for v in ('plain', 'before', 'after')}
    n = min(len(d[(b, s, v)]) for v in ('plain', 'before', 'after'))
    print(f"{b:16}{s:>9}{m['plain']:>9.2f}{m['before']:>9.2f}{m['after']:>9.2f}  {m['plain']/m['before']:>10.2f}{m['plain']/m['after']:>12.2f}{m['before']/m['after']:>12.2f}  {n}")
