import sys
txt=open(sys.argv[1]).read()
print(txt.split('\n')[0] if txt.startswith('OSU') else txt.split('\n')[1])
for block in txt.split('\n\n'):
    lines=block.strip().split('\n')
    if len(lines)<3 or ' osu_' not in lines[0]: continue
    rows=[l.split() for l in lines[2:] if l.strip() and l.split()[0].isdigit()]
    rat=[(float(r[3]),r[0],r[4],r[5]) for r in rows]
    print(f"{lines[0]:28} rows {len(rat):2}  min ratio {min(rat)[0]:.2f} at {min(rat)[1]} B (spread {min(rat)[2]}, best/best {min(rat)[3]});  median of rows {sorted(r[0] for r in rat)[len(rat)//2]:.2f}")
