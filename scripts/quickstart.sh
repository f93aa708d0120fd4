#!/usr/bin/env bash
# Sets up, builds and runs the main job: `deep-profile run` on the bundled example workload, on whatever
# this machine has. With no GPU or no Nsight tools it still runs (the example on CPU) and the run's
# report says which stages were skipped and why. The README's first quick-start command.
# Extra arguments go to `deep-profile run` (e.g. --preset quick, --set run.top_n_kernels=5, -- CMD...).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the main job's packages (no test framework, compilers for fuzzing, browser or cluster daemons).
scripts/install-deps.sh --main-job
# The tests (and Catch2, which --main-job leaves out) are the test command's: scripts/test.sh builds them.
cmake --preset release -DLLMPROF_BUILD_TESTS=OFF
# Only what the main job runs: deep-profile and, where LibTorch was found, the bundled example it profiles.
# The tests are built by the test command (scripts/test.sh); building them here too was most of the 19 min this
# script took on a fresh 2-core machine (issue 35: 298 targets for a job that runs two).
targets=(deep-profile)
if cmake --build --preset release --target help | grep -q '^llmprof-decode:'; then targets+=(llmprof-decode); fi
cmake --build --preset release --target "${targets[@]}"
gpu_settings=()
if [ ! -r /proc/driver/nvidia/version ]; then
  # Without a GPU the timeline is CPU-only and small: capture the whole run, so that the NVTX stage table
  # shows prefill as well as decode (the default gate keeps only decode).
  echo "quickstart: no NVIDIA GPU here: nsys captures the whole run (--set nsys.capture_range=none); kernel-level stages need a GPU"
  gpu_settings=(--set nsys.capture_range=none)
fi
status=0
build/release/apps/deep-profile/deep-profile run "${gpu_settings[@]}" "$@" || status=$?
echo
case "$status" in
  0) why="everything this machine allows ran (on a machine without a GPU the kernel-level stages are recorded as skipped, 'need an NVIDIA GPU')" ;;
  1) why="a stage failed or was skipped; the stage table above and report.md say which and why" ;;
  3) why="this machine lacks a GPU profiler (nsys/ncu; scripts/install-deps.sh installs Debian's unless --no-nsight): the workload ran bare and the profiling stages were skipped, as the table above says" ;;
  *) why="see README 'Exit codes'" ;;
esac
echo "quickstart: deep-profile run exited with $status: $why."
exit "$status"
