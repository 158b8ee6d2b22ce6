#!/usr/bin/env bash
# Usage: expect_peer_death.sh NP PROGRAM MPIEXEC [FLAGS...]
# Runs PROGRAM, whose rank 1 kills itself mid-barrier, and checks that every survivor reported
# the death of rank 1 and that no shared-memory segment was left in /dev/shm.
set -u
np=$1; program=$2; shift 2
before=$(ls /dev/shm 2>/dev/null | grep '^cachecomm-' | sort)
# Keep the launcher from killing the survivors before they notice (Open MPI, MPICH flags).
if "$1" --version 2>&1 | grep -q -E 'Open MPI|OpenRTE'; then
  extra=(--mca orte_abort_on_non_zero_status 0 --enable-recovery)
else
  extra=(-disable-auto-cleanup)
fi
output=$(timeout 90 "$@" "${extra[@]}" -n "$np" "$program" 2>&1)
status=$?
echo "$output"
if [ $status -eq 124 ]; then echo "FAIL: the job hung"; exit 1; fi
reports=$(echo "$output" | grep -c '^PEER FAILURE 1:')
if [ "$reports" -ne $((np - 1)) ]; then
  echo "FAIL: expected $((np - 1)) survivors to report rank 1's death, saw $reports"; exit 1
fi
sleep 0.5
after=$(ls /dev/shm 2>/dev/null | grep '^cachecomm-' | sort)
leaked=$(comm -13 <(echo "$before") <(echo "$after"))
if [ -n "$leaked" ]; then echo "FAIL: segments left behind: $leaked"; exit 1; fi
echo "PASS: $((np - 1)) survivors named rank 1; no segment left"
