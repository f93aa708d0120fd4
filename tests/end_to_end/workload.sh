#!/bin/sh
# Small stand-in workload for the end-to-end tests (used where the LibTorch example is not built, and
# for the failure scenarios). E2E_WORKLOAD_MODE: ok (default) | crash | hang | slow.
# Like the example, it writes llmprof metrics to $LLMPROF_METRICS_FILE when that is set.
if [ -n "$LLMPROF_METRICS_FILE" ]; then
  printf '{"schema":"llmprof.workload_metrics/1","nvtx_domain":"","nvtx_ranges":["prefill","decode"]}\n' > "$LLMPROF_METRICS_FILE"
fi
case "${E2E_WORKLOAD_MODE:-ok}" in
  crash)
    echo "loading weights" >&2
    echo "RuntimeError: CUDA error: an illegal memory access was encountered" >&2
    exit 3 ;;
  hang)
    # A grandchild too: the timeout must kill the whole tree, not just this shell.
    sleep 600 &
    echo $! > "${E2E_PID_FILE:-/dev/null}"
    wait ;;
  slow)
    if [ -n "$E2E_STARTED_FILE" ]; then : > "$E2E_STARTED_FILE"; fi
    sleep 60 ;;
esac
echo "decode done"
