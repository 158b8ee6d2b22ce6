#!/usr/bin/env bash
# bench_smoke.sh SUITE OUTDIR CHECKER BENCH MPIEXEC ARGS...: runs one suite at --quick and checks its JSON.
set -euo pipefail
suite=$1 out=$2 checker=$3 bench=$4
shift 4
mkdir -p "$out"
rm -f "$out/$suite.json"
"$@" "$bench" "$suite" --quick --json "$out/$suite.json"
python3 "$checker" "$out/$suite.json" --suite "$suite"
