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
echo "quickstart: deep-profile run exited with $status (0: everything asked for ran; 1: some stages were"
echo "skipped or failed, see the stage table above and report.md; README 'Exit codes' lists the rest)."
exit "$status"
