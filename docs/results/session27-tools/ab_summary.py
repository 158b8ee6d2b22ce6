# Session 27: summarises variants.sh outputs (docs/results/session25-tools) of three variants
# plain, A, B: per file, the geometric mean of B / A medians from 16 KiB, and per size
# "KiB:plain/A / plain/B" (ratios of medians over rounds; > 1: faster than plain).
# usage: ab_summary.py A B FILE...
import collections, math, statistics, sys

a_name, b_name = sys.argv[1], sys.argv[2]
for path in sys.argv[3:]:
    times = collections.defaultdict(list)
    for line in open(path):
        parts = line.split()
        if len(parts) != 4:
            continue
        try:
            _, variant, size, us = parts
            times[(variant, int(size))].append(float(us))
        except ValueError:
            continue
    med = {k: statistics.median(v) for k, v in times.items()}
    sizes = sorted({s for (v, s) in med if v == a_name and s >= 16384})
    ratios, cells = [], []
    for s in sizes:
        if (b_name, s) not in med or ("plain", s) not in med:
            continue
        ratios.append(med[(b_name, s)] / med[(a_name, s)])
        cells.append("%d:%.2f/%.2f" % (s >> 10, med[("plain", s)] / med[(a_name, s)],
                                       med[("plain", s)] / med[(b_name, s)]))
    if ratios:
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("%s geo %s/%s %.3f  %s" % (path.split("/")[-1], b_name, a_name, geo, " ".join(cells)))
