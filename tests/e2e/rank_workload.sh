#!/bin/sh
# The end-to-end workload for one rank under a launcher: tests/end_to_end/workload.sh, except that
# the rank named by E2E_HANG_RANK hangs (sleep with a grandchild), E2E_FAIL_RANK exits 3, and E2E_DAEMON_RANK
# leaves a SIGTERM-proof setsid daemon that writes its pid into the folder $E2E_DAEMON_DIR (and goes on only once
# it has: tests/support/handshake.sh).
rank="${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${RANK:-0}}}"
echo "rank $rank on $(hostname) CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}"
if [ "$rank" = "${E2E_HANG_RANK:-none}" ]; then
  sleep 600 &
  wait
fi
if [ "$rank" = "${E2E_DAEMON_RANK:-none}" ]; then
  . "$(dirname "$0")/../support/handshake.sh"
  leave_term_proof_daemon "$E2E_DAEMON_DIR" || exit 1
fi
if [ "$rank" = "${E2E_FAIL_RANK:-none}" ]; then
  echo "rank $rank: RuntimeError: NCCL error: unhandled system error" >&2
  exit 3
fi
exec "$(dirname "$0")/workload.sh"
