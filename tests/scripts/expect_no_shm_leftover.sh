#!/usr/bin/env bash
# Usage: expect_no_shm_leftover.sh NP PROGRAM MPIEXEC [FLAGS...]
# Runs PROGRAM, one of whose ranks dies while the others are inside a collective, lets the launcher
# kill the job, and fails if a cachecomm entry was left in /dev/shm or the job hung.
set -u
np=$1; program=$2; shift 2
list() { ls /dev/shm 2>/dev/null | grep '^cachecomm-' | sort; }
before=$(list)
output=$(timeout 90 "$@" -n "$np" "$program" 2>&1)
status=$?
echo "$output" | tail -20
if [ $status -eq 124 ]; then echo "FAIL: the job hung"; exit 1; fi
if ! echo "$output" | grep -q '^FIRST SEGMENT BUILT'; then echo "FAIL: the job did not start"; exit 1; fi
if [ $status -eq 0 ]; then echo "FAIL: the job succeeded although a rank died"; exit 1; fi
# A job running beside this one names its segments for a moment: only an entry that stays counts.
leaked=$(comm -13 <(echo "$before") <(list))
for _ in 1 2 3 4 5; do
  [ -z "$leaked" ] && break
  sleep 1
  leaked=$(comm -12 <(echo "$leaked") <(list))
done
if [ -n "$leaked" ]; then echo "FAIL: left in /dev/shm: $leaked"; exit 1; fi
echo "PASS: the job died (status $status) and left nothing in /dev/shm"
