#!/usr/bin/env bash
# A preload library loaded into a program of another MPI must serve nothing: one line on stderr
# naming both MPIs (once per job), and the program prints exactly what it prints without it.
#
# expect_mpi_mismatch.sh --mpirun EXE [--flag F]... --np N --lib LIB [--fake VERSION] --running NAME
#                        -- PROGRAM [ARGS]...
#   --fake VERSION  make the preload see VERSION as MPI_Get_library_version (a faked mismatch);
#                   without it the program must genuinely run on another MPI than LIB's
#   --running NAME  the line must name NAME (e.g. "MPICH 5") as the MPI the program runs on
set -euo pipefail
mpirun=""; np=""; lib=""; flags=(); fake=""; running=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpirun) mpirun="$2"; shift 2 ;;
    --flag) flags+=("$2"); shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --lib) lib="$2"; shift 2 ;;
    --fake) fake="$2"; shift 2 ;;
    --running) running="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "expect_mpi_mismatch.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$mpirun" && -n "$np" && -n "$lib" && -n "$running" && $# -gt 0 ]] || { echo "expect_mpi_mismatch.sh: missing arguments" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # run NAME ENV...
  local name="$1"; shift
  if ! timeout 180 "$mpirun" -n "$np" "${flags[@]}" env "$@" "${program[@]}" >"$work/$name.out" 2>"$work/$name.err"; then
    echo "FAIL: run '$name' exited with an error" >&2; cat "$work/$name.out" "$work/$name.err" >&2; exit 1
  fi
}
program=("$@")
run plain CACHECOMM_PRELOAD_SUMMARY=1
preload_env=(LD_PRELOAD="$lib" CACHECOMM_PRELOAD_SUMMARY=1)
[[ -n "$fake" ]] && preload_env+=(CACHECOMM_TEST_MPI_LIBRARY_VERSION="$fake")
run preload "${preload_env[@]}"
cat "$work/preload.err"
diff "$work/plain.out" "$work/preload.out" >"$work/diff" ||
  { echo "FAIL: output differs with the mismatched preload (< plain, > preloaded)" >&2; cat "$work/diff" >&2; exit 1; }
lines=$(grep -c "^cachecomm preload: built for .* but this program runs on .*: every MPI call goes to MPI unchanged$" "$work/preload.err" || true)
[[ "$lines" -eq 1 ]] || { echo "FAIL: expected one mismatch line on stderr, found $lines" >&2; exit 1; }
grep -qF "runs on $running" "$work/preload.err" ||
  { echo "FAIL: the mismatch line does not name $running as the MPI the program runs on" >&2; exit 1; }
if grep -q "cachecomm preload summary" "$work/preload.err"; then
  echo "FAIL: the mismatched preload started (it printed its summary)" >&2; exit 1
fi
echo "PASS: outputs identical ($(wc -l <"$work/plain.out") lines), one mismatch line, nothing served"
