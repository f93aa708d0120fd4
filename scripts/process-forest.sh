#!/usr/bin/env bash
# Appends the machine's process tree to OUTFILE every 2.5 s while MARKER exists (GPU-machine diagnostics: what
# stands between ncu and the application, and whether a workload outlives its pass end).
# Usage: scripts/process-forest.sh MARKER OUTFILE &   ...   rm MARKER
marker=$1 out=$2
while [ -e "$marker" ]; do
  # shellcheck disable=SC2009  # the whole tree with its arguments, as ps draws it, is the point
  { echo "--- $(date -u +%T.%N | cut -c1-12)"
    ps -eo pid,ppid,pgid,stat,etimes,args --forest | grep -v -E ' \[.*\]$|ps -eo|grep -v|sleep 2.5|sshd' | cut -c1-220
  } >> "$out"
  sleep 2.5
done
