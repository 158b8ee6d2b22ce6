# Session 24: the rows of IMB CHECK builds (-DCHECK) whose 'defects' column is not 0, and any
# error line, per output file: python3 imb_defects.py OUTPUT...
import sys,re
for f in sys.argv[1:]:
    bench=None; cols=None; bad=[]; errs=[]
    for line in open(f, errors='replace'):
        m=re.match(r'# Benchmarking (\S+)',line)
        if m: bench=m.group(1); cols=None; continue
        if 'defects' in line and '#bytes' in line: cols=line.split(); continue
        if re.search(r'\bError\b|invalid buffer|MPI_ERR|Segmentation|signal', line): errs.append(line.strip())
        if cols:
            p=line.split()
            if len(p)==len(cols) and p[0].isdigit():
                if float(p[-1])>0: bad.append((bench,p[0],p[-1]))
            elif line.strip()=='' : pass
    print(f, 'defects:', bad[:5], 'errors:', errs[:3])
