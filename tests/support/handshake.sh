# The shell side of the tests' process handshake (the C++ side: tests/support/process_handshake.hpp), sourced by
# the shell workloads the tests start: `. tests/support/handshake.sh`. A process a test will signal, or whose state
# a test relies on, first sets up what the test relies on (a trap, an ignored signal, a child), THEN says so by
# writing its pid file; whoever depends on that waits for the file, bounded, never for a fixed time. Under two busy
# loops on the 2-core development machine a shell took longer than a 0.3 s sleep to start a grandchild, so a sleep
# is never a handshake.
#
# A pid file is complete when it ends in a newline: `echo $$ > FILE` writes "PID\n" in one write(), so a reader
# that sees the newline sees the whole pid (the fake ncu's FAKE_NCU_CONNECTED_PID_FILE reads it the same way).

# announce_ready FILE: writes this shell's pid to FILE. Call it after the set-up the test relies on. In `sh -c`
# (a daemon) $$ is that shell's own pid; in a ( ) subshell it would be the parent's, so use `sh -c` there.
announce_ready() {
  echo "$$" > "$1"
}

# await_file FILE [SECONDS]: waits until FILE holds a line ending in a newline (a pid file announce_ready or a
# test's process wrote); after SECONDS (default 60) it says so on stderr and returns 1.
await_file() {
  _handshake_polls=$(( ${2:-60} * 100 ))
  # `read` succeeds only on a line its newline ends: builtins only, nothing forked per look.
  until { IFS= read -r _handshake_line && [ -n "$_handshake_line" ]; } 2> /dev/null < "$1"; do
    _handshake_polls=$((_handshake_polls - 1))
    if [ "$_handshake_polls" -le 0 ]; then
      echo "handshake.sh: no complete line in $1 after ${2:-60} s" >&2
      return 1
    fi
    sleep 0.01
  done
}

# await_program PID PROGRAM [SECONDS]: waits until process PID runs PROGRAM (the file name of /proc/PID/exe), e.g.
# a child that is still the forked shell or setsid before it execs `sleep`; a test that names survivors by program
# needs them past their exec. After SECONDS (default 60), or when PID is gone, it says so on stderr and returns 1.
await_program() {
  _handshake_polls=$(( ${3:-60} * 100 ))
  while :; do
    _handshake_exe=$(readlink "/proc/$1/exe" 2> /dev/null) || {
      echo "handshake.sh: process $1 is gone before it ran $2" >&2
      return 1
    }
    [ "${_handshake_exe##*/}" = "$2" ] && return 0
    _handshake_polls=$((_handshake_polls - 1))
    if [ "$_handshake_polls" -le 0 ]; then
      echo "handshake.sh: process $1 runs $_handshake_exe, not $2, after ${3:-60} s" >&2
      return 1
    fi
    sleep 0.01
  done
}

# leave_term_proof_daemon DIR: starts a daemon in a session of its own (setsid) that ignores SIGTERM, writes its
# pid to DIR/PID.pid and runs `sleep` until SIGKILL (an engine worker holding its port, left behind); returns once
# that file is written, so a workload that exits next leaves a daemon that is ready. It ignores SIGTERM from birth:
# the subshell ignores it before it execs setsid, and an ignored disposition survives fork and exec, so no SIGTERM
# can come before it (a daemon that ran `trap '' TERM` itself was once ended by a SIGTERM that came first). The
# subshell keeps the caller's own SIGTERM as it was. setsid execs without forking (the subshell leads no process
# group), so $! is the daemon's pid. One process, which execs sleep: a daemon that loops over short children has
# one orphaned by its SIGKILL now and then, a survivor of its own that the tests would count.
leave_term_proof_daemon() {
  ( trap '' TERM; exec setsid /bin/sh -c 'echo $$ > "$0/$$.pid"; exec sleep 100000' "$1" ) \
    < /dev/null > /dev/null 2>&1 &
  await_file "$1/$!.pid"
}
