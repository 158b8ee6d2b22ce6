#!/usr/bin/env bash
# check_report.sh REPORT SMOKEDIR: draws the report from every smoke JSON; each image must exist
# and be non-empty, and the page must name each one. Exit 77 (skipped) without matplotlib.
set -euo pipefail
report=$1 dir=$2
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  echo "matplotlib is not installed for $(command -v python3) (scripts/setup.sh installs it)"
  exit 77
fi
shopt -s nullglob
inputs=("$dir"/*.json)
if [ ${#inputs[@]} -eq 0 ]; then echo "no smoke JSON in $dir"; exit 1; fi
out="$dir/report"
rm -rf "$out"
"$report" "${inputs[@]}" -o "$out"
test -s "$out/index.html" || { echo "index.html missing or empty"; exit 1; }
images=("$out"/*.png)
[ ${#images[@]} -ge 8 ] || { echo "expected at least 8 plots, got ${#images[@]}"; exit 1; }
for image in "${images[@]}"; do
  test -s "$image" || { echo "empty image $image"; exit 1; }
  head -c 8 "$image" | grep -q PNG || { echo "not a PNG: $image"; exit 1; }
  grep -q "$(basename "$image")" "$out/index.html" || { echo "page does not show $image"; exit 1; }
done
for expected in pingpong_pair_matrix pingpong_by_size bandwidth_bw_by_size limits_memcpy threads_omp_overhead io_io speedup; do
  ls "$out"/*"$expected"*.png >/dev/null 2>&1 || { echo "no plot named *$expected*"; exit 1; }
done
echo "report: ${#images[@]} plots in $out"
