#!/usr/bin/env bash
# The README's test command (scripts/test.sh) several times in a row beside busy loops that take the cores, the
# way a loaded CI machine or a developer's build beside it runs it: a test that races a process it starts fails
# here. Every run must pass; nothing is retried.
#
# Usage: scripts/stress-tests.sh [--runs N] [--busy N] [--nice N] [--log-dir DIR] [-- COMMAND...]
#   --runs N     runs of the command, one after the other (default 3)
#   --busy N     busy loops beside them (default 2: both cores of the 2-core development machine)
#   --nice N     the busy loops' niceness (default 0: as busy as the tests; 19 leaves a shared machine usable)
#   --log-dir D  where each run's output goes (default build/stress)
#   COMMAND      what to run (default scripts/test.sh; e.g. -- ctest --preset dev -L e2e for the e2e tests only)
# Prints one line per run (its time and its result) and a summary; exits 1 when any run failed.
# The busy loops are started here, their PIDs kept in DIR/busy.pids, and stopped by PID when this script exits
# (normally, on error or on Ctrl-C), never by name.
set -uo pipefail
cd "$(dirname "$0")/.."

runs=3
busy=2
niceness=0
log_dir=build/stress
command=(scripts/test.sh)
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --nice) niceness=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --) shift; [ $# -gt 0 ] && command=("$@"); break ;;
    *) echo "stress-tests.sh: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done
for number in "$runs" "$busy" ; do
  case "$number" in
    ''|*[!0-9]*) echo "stress-tests.sh: --runs and --busy take a whole number, not '$number'" >&2; exit 2 ;;
  esac
done

mkdir -p "$log_dir"
pid_file="$log_dir/busy.pids"
results="$log_dir/results.tsv"
: > "$pid_file"

stop_busy_loops() {
  local pid
  while read -r pid; do
    [ -n "$pid" ] && kill "$pid" 2> /dev/null
  done < "$pid_file"
  while read -r pid; do
    [ -n "$pid" ] && wait "$pid" 2> /dev/null
  done < "$pid_file"
  : > "$pid_file"
}
trap stop_busy_loops EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq 1 "$busy"); do
  nice -n "$niceness" sh -c 'while :; do :; done' &
  echo $! >> "$pid_file"
done
echo "stress-tests.sh: $busy busy loop(s) at nice $niceness (PIDs $(tr '\n' ' ' < "$pid_file")), $runs run(s) of:" \
  "${command[*]}"

printf 'run\tseconds\texit_code\tlog\n' > "$results"
failed=0
for run in $(seq 1 "$runs"); do
  log="$log_dir/run-$run.log"
  started=$(date +%s)
  "${command[@]}" > "$log" 2>&1
  status=$?
  seconds=$(( $(date +%s) - started ))
  printf '%s\t%s\t%s\t%s\n' "$run" "$seconds" "$status" "$log" >> "$results"
  if [ "$status" -eq 0 ]; then
    echo "run $run: passed in ${seconds} s ($log)"
  else
    failed=$((failed + 1))
    echo "run $run: FAILED (exit $status) after ${seconds} s; its failures:"
    grep -E -A3 'tests failed|Failed|FAILED|\*\*\*Timeout' "$log" | tail -40 | sed 's/^/  /'
  fi
done
echo "stress-tests.sh: $((runs - failed)) of $runs run(s) passed beside $busy busy loop(s);" \
  "times and results in $results"
[ "$failed" -eq 0 ]
