#!/bin/sh
# The end-to-end workload for one rank under a launcher: tests/end_to_end/workload.sh, except that
# the rank named by E2E_HANG_RANK hangs (sleep with a grandchild) and E2E_FAIL_RANK exits 3.
rank="${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${RANK:-0}}}"
echo "rank $rank on $(hostname) CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset}"
if [ "$rank" = "${E2E_HANG_RANK:-none}" ]; then
  sleep 600 &
  wait
fi
if [ "$rank" = "${E2E_FAIL_RANK:-none}" ]; then
  echo "rank $rank: RuntimeError: NCCL error: unhandled system error" >&2
  exit 3
fi
exec "$(dirname "$0")/workload.sh"
