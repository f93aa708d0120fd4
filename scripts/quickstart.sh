#!/usr/bin/env bash
# Sets up, builds and runs the main job: `deep-profile run` on the bundled example workload, on whatever
# this machine has. With no GPU or no Nsight tools it still runs (the example on CPU) and the run's
# report says which stages were skipped and why. The README's first quick-start command.
# Extra arguments go to `deep-profile run` (e.g. --preset quick, --set run.top_n_kernels=5, -- CMD...).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
status=0
build/release/apps/deep-profile/deep-profile run "$@" || status=$?
echo
case "$status" in
  0) why="everything asked for ran" ;;
  1) why="a stage failed or was skipped; the stage table above and report.md say which and why" ;;
  3) why="this machine lacks a GPU profiler (nsys/ncu): the workload ran bare and the profiling stages were skipped, as the table above says" ;;
  *) why="see README 'Exit codes'" ;;
esac
echo "quickstart: deep-profile run exited with $status: $why."
exit "$status"
