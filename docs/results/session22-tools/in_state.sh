#!/usr/bin/env bash
# in_state.sh slow|usual MAXWAIT cmd...: waits (probing every 5 s) for the state, then runs cmd
want=$1; max=$2; shift 2; t=0
while :; do p=$(/tmp/p/xchg 32768 300 64 | head -1 | awk '{print $7}')
  s=usual; awk -v p="$p" 'BEGIN{exit !(p>4)}' && s=slow
  [[ $s == $want ]] && { echo "probe $p ($s)"; exec "$@"; }
  ((t+=5)); ((t>max)) && { echo "no $want state in $max s"; exit 3; }; sleep 5; done
