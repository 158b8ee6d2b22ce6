#!/usr/bin/env bash
# check_report_selection.sh REPORT WORKDIR: the report's "automatic choice against the best
# candidate" table, from a made-up coll run: a cell where auto is 1.5x the fastest candidate (the
# system MPI) is listed, a cell within 1.10 is not, and the summary counts both. Exit 77 (skipped)
# without matplotlib.
set -euo pipefail
report=$1 dir=$2
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "matplotlib is not installed for $(command -v python3) (scripts/setup.sh installs it)"
  exit 77
fi
mkdir -p "$dir"
cat > "$dir/coll.json" <<'JSON'
{"tool": "cachecomm-bench", "suite": "coll", "np": 3, "oversubscribed": true, "machine": {},
 "results": [
  {"op": "bcast", "impl": "mpi", "algorithm": "default", "bytes": 65536, "buffers": "hot", "timing": "per-call", "median_us": 10.0},
  {"op": "bcast", "impl": "cachecomm", "algorithm": "auto:central", "bytes": 65536, "buffers": "hot", "timing": "per-call", "median_us": 15.0},
  {"op": "bcast", "impl": "cachecomm", "algorithm": "central", "bytes": 65536, "buffers": "hot", "timing": "per-call", "median_us": 14.8},
  {"op": "bcast", "impl": "mpi", "algorithm": "default", "bytes": 8, "buffers": "cold", "timing": "per-call", "median_us": 1.0},
  {"op": "bcast", "impl": "cachecomm", "algorithm": "auto:slots", "bytes": 8, "buffers": "cold", "timing": "per-call", "median_us": 0.52},
  {"op": "bcast", "impl": "cachecomm", "algorithm": "slots", "bytes": 8, "buffers": "cold", "timing": "per-call", "median_us": 0.50}
 ]}
JSON
out=$("$report" "$dir/coll.json" -o "$dir/report" --format md)
echo "$out"
grep -q "within 1.10 of the best candidate of the same run in 1 of 2 cells; worst 1.50" <<<"$out" ||
  { echo "summary line missing or wrong"; exit 1; }
page="$dir/report/index.md"
grep -q "| 3 (oversubscribed) | bcast | hot | per-call | 64 KiB | central | mpi | 1.50 |" "$page" ||
  { echo "the 1.5x cell is not listed"; cat "$page"; exit 1; }
if grep -q "| bcast | cold | per-call | 8 B |" "$page"; then
  echo "a cell within 1.10 is listed as a miss"; exit 1
fi
echo "selection table: ok"
