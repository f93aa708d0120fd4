#!/bin/sh
# Small stand-in workload for the end-to-end tests (used where the LibTorch example is not built, and
# for the failure scenarios). E2E_WORKLOAD_MODE: ok (default) | crash | hang | slow.
# Like the example, it writes llmprof metrics to $LLMPROF_METRICS_FILE when that is set.
# The figures are those of the recorded H100 decode run (tests/data/h100-nsight-2025.3), whose nsys/ncu
# outputs the fake tools replay, so the analysis sees one consistent run.
if [ -n "$LLMPROF_METRICS_FILE" ]; then
  cat > "$LLMPROF_METRICS_FILE" <<'JSON'
{"schema": "llmprof.workload_metrics/1", "model": "llama-style", "device": "cuda:0",
 "device_name": "NVIDIA H100 80GB HBM3", "dtype": "fp16", "batch": 4, "prompt_tokens": 256, "new_tokens": 8,
 "layers": 4, "hidden": 1024, "heads": 16, "kv_heads": 16, "intermediate": 4096, "vocab": 32000,
 "parameters": 83116032, "prefill_s": 1.280269408, "decode_s": 0.177371307,
 "time_per_output_token_s": 0.022171413375, "tokens_per_s": 180.4126339, "generated_tokens": 32,
 "flop_per_prefill": 170221633536, "flop_per_token": 166232064, "decode_flop": 5319426048,
 "nvtx_domain": "", "nvtx_ranges": ["prefill", "decode"]}
JSON
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
    # The handshake (tests/support/handshake.sh): the pid once running, for the test to interrupt the stage.
    if [ -n "$E2E_STARTED_FILE" ]; then echo $$ > "$E2E_STARTED_FILE"; fi
    sleep 60 ;;
esac
echo "decode done"
