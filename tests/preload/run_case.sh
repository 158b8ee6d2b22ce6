#!/usr/bin/env bash
# Runs one plain MPI program with and without the preload library and compares what it prints.
#
# run_case.sh --mpirun EXE [--flag F]... --np N --lib LIB [checks]... -- PROGRAM [ARGS]...
# checks:
#   --served CALL            the summary must show CALL (e.g. MPI_Barrier) served at least once
#   --reason CALL:REASON     the summary must show CALL passed through for REASON
#   --no-reason CALL:REASON  the summary must not show CALL passed through for REASON
#   --none-served            the summary must show no call served at all
#   --failed CALL            the summary must show CALL failed inside cachecomm at least once
#   --preload-only VAR=VALUE run only with the preload library, with VAR set (repeatable) ...
#   --expect TEXT            ... and require TEXT in its standard output (repeatable)
#   --expect-summary TEXT    the summary must contain TEXT (case-insensitive)
#   --summary-regex RE       the summary must have a line matching the extended regex RE
#                            (repeatable)
#   --env VAR=VALUE          set VAR in both runs (repeatable)
#   --linked                 PROGRAM links the library itself (no LD_PRELOAD): the baseline run
#                            switches it off with CACHECOMM_PRELOAD=0 and must serve nothing
#   --run-limit SECONDS      kill a run that takes longer (default 180)
set -euo pipefail

mpirun=""; np=""; lib=""; flags=(); served=(); reasons=(); no_reasons=(); none_served=0; failed=(); preload_only=(); expect=(); expect_summary=""; summary_regexes=(); linked=0; common_env=(); run_limit=180
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpirun) mpirun="$2"; shift 2 ;;
    --flag) flags+=("$2"); shift 2 ;;
    --np) np="$2"; shift 2 ;;
    --lib) lib="$2"; shift 2 ;;
    --served) served+=("$2"); shift 2 ;;
    --reason) reasons+=("$2"); shift 2 ;;
    --no-reason) no_reasons+=("$2"); shift 2 ;;
    --none-served) none_served=1; shift ;;
    --failed) failed+=("$2"); shift 2 ;;
    --preload-only) preload_only+=("$2"); shift 2 ;;
    --expect) expect+=("$2"); shift 2 ;;
    --expect-summary) expect_summary="$2"; shift 2 ;;
    --summary-regex) summary_regexes+=("$2"); shift 2 ;;
    --linked) linked=1; shift ;;
    --env) common_env+=("$2"); shift 2 ;;
    --run-limit) run_limit="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "run_case.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ -n "$mpirun" && -n "$np" && -n "$lib" && $# -gt 0 ]] || { echo "run_case.sh: missing arguments" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # run NAME ENV... : the program under mpirun with ENV set in every rank
  local name="$1"; shift
  if ! timeout "$run_limit" "$mpirun" -n "$np" "${flags[@]}" env "${common_env[@]}" "$@" "${program[@]}" >"$work/$name.out" 2>"$work/$name.err"; then
    echo "FAIL: run '$name' exited with an error" >&2
    cat "$work/$name.out" "$work/$name.err" >&2
    exit 1
  fi
}

program=("$@")
# A sanitizer build's library needs the sanitizer runtimes loaded before it (ahead of any other
# library) when it is preloaded into an uninstrumented program.
if [[ -n "${CACHECOMM_TEST_PRELOAD_FIRST:-}" ]]; then lib="$CACHECOMM_TEST_PRELOAD_FIRST:$lib"; fi
if [[ ${#preload_only[@]} -gt 0 ]]; then
  run preload LD_PRELOAD="$lib" CACHECOMM_PRELOAD_SUMMARY=1 "${preload_only[@]}"
  cat "$work/preload.out" "$work/preload.err"
  for text in "${expect[@]}"; do
    grep -qF -- "$text" "$work/preload.out" || { echo "FAIL: expected '$text' in the output" >&2; exit 1; }
  done
else
  if [[ $linked -eq 1 ]]; then
    run plain CACHECOMM_PRELOAD_SUMMARY=1 CACHECOMM_PRELOAD=0
    run preload CACHECOMM_PRELOAD_SUMMARY=1
    if awk '$2 == "served" && $3 > 0 {found = 1} END {exit !found}' "$work/plain.err"; then
      echo "FAIL: CACHECOMM_PRELOAD=0 still served calls" >&2; cat "$work/plain.err" >&2; exit 1
    fi
    grep -qE "disabled [0-9]+" "$work/plain.err" || { echo "FAIL: CACHECOMM_PRELOAD=0 not in the summary" >&2; exit 1; }
  else
    run plain CACHECOMM_PRELOAD_SUMMARY=1
    run preload LD_PRELOAD="$lib" CACHECOMM_PRELOAD_SUMMARY=1
  fi
  cat "$work/preload.err"
  if ! diff "$work/plain.out" "$work/preload.out" >"$work/diff"; then
    echo "FAIL: output differs with the preload library (< plain MPI, > preloaded)" >&2
    cat "$work/diff" >&2; exit 1
  fi
  echo "outputs identical ($(wc -l <"$work/plain.out") lines)"
  if [[ $linked -eq 0 ]] && grep -q "cachecomm preload summary" "$work/plain.err"; then
    echo "FAIL: the plain run printed a preload summary" >&2; exit 1
  fi
fi

summary="$work/preload.err"
grep -q "cachecomm preload summary ($np ranks" "$summary" || { echo "FAIL: no preload summary: the library was not interposed" >&2; exit 1; }
for regex in "${summary_regexes[@]}"; do
  if ! grep -qE -- "$regex" "$summary"; then
    echo "FAIL: no line of the summary matches '$regex'" >&2; exit 1
  fi
done
if [[ -n "$expect_summary" ]] && ! grep -qiF -- "$expect_summary" "$summary"; then
  echo "FAIL: expected '$expect_summary' in the summary" >&2; exit 1
fi
for call in "${served[@]}"; do
  count=$(awk -v c="$call" '$1 == c && $2 == "served" {print $3}' "$summary")
  [[ -n "$count" && "$count" -gt 0 ]] || { echo "FAIL: $call was never served by cachecomm" >&2; exit 1; }
done
for entry in "${reasons[@]}"; do
  call="${entry%%:*}"; reason="${entry#*:}"
  grep -E "^ +$call +served" "$summary" | grep -qE "[(, ]$reason [0-9]+" ||
    { echo "FAIL: $call was never passed through for $reason" >&2; exit 1; }
done
for entry in "${no_reasons[@]}"; do
  call="${entry%%:*}"; reason="${entry#*:}"
  if grep -E "^ +$call +served" "$summary" | grep -qE "[(, ]$reason [0-9]+"; then
    echo "FAIL: $call was passed through for $reason" >&2; exit 1
  fi
done
for call in "${failed[@]}"; do
  grep -E "^ +$call +served" "$summary" | grep -qE "failed +[1-9]" ||
    { echo "FAIL: the summary shows no failure of $call inside cachecomm" >&2; exit 1; }
done
if [[ $none_served -eq 1 ]]; then
  if awk '$2 == "served" && $3 > 0 {found = 1} END {exit !found}' "$summary"; then
    echo "FAIL: calls were served by cachecomm where everything must pass through" >&2; exit 1
  fi
fi
echo "PASS"
