# Session 21: plain / preloaded per (MPI, benchmark, size) in two osu_compare.sh JSON files (before,
# after), and the cells below 1 in either.
import json, collections, sys
def table(p):
    t = collections.defaultdict(dict)
    for r in json.load(open(p))['results']:
        t[(r['mpi_library'], r['benchmark'], r['bytes'])][r['impl']] = r['median_us']
    return t
b, a = table(sys.argv[1]), table(sys.argv[2])
below_b = below_a = total = 0
rows = []
for k in sorted(set(a) & set(b)):
    if 'mpi' not in a[k] or 'cachecomm' not in a[k] or 'cachecomm' not in b[k]: continue
    rb = b[k]['mpi'] / b[k]['cachecomm']; ra = a[k]['mpi'] / a[k]['cachecomm']
    total += 1; below_b += rb < 1; below_a += ra < 1
    if ra < 0.95 or rb < 0.95: rows.append((k, rb, ra, a[k]['mpi'], a[k]['cachecomm']))
print(f"cells: {total}; plain/preloaded below 1: before {below_b}, after {below_a}")
by_mpi = collections.Counter(); by_mpi_b = collections.Counter()
for k in sorted(set(a) & set(b)):
    if 'cachecomm' in a[k] and 'mpi' in a[k]:
        by_mpi[k[0]] += a[k]['mpi'] / a[k]['cachecomm'] < 1
        by_mpi_b[k[0]] += b[k]['mpi'] / b[k]['cachecomm'] < 1
print("below 1 per MPI (before -> after):", {m: f"{by_mpi_b[m]} -> {by_mpi[m]}" for m in by_mpi})
print(f"{'mpi':7}{'benchmark':18}{'bytes':>9}{'before':>8}{'after':>8}{'plain us':>10}{'pre us':>9}")
for (m, bench, s), rb, ra, pm, pc in rows:
    print(f"{m:7}{bench:18}{s:>9}{rb:>8.2f}{ra:>8.2f}{pm:>10.2f}{pc:>9.2f}")
