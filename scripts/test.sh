#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the README's second quick-start command.
# Extra arguments go to ctest (e.g. -R csv).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset dev
cmake --build --preset dev
ctest --preset dev "$@"
