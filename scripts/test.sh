#!/usr/bin/env bash
# Sets up, builds with warnings as errors and runs the whole test suite, then the release build and the quick
# start: the README's second quick-start command.
# Extra arguments go to ctest (e.g. -R csv).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# One build for the tests and the warnings: a new warning in this tree's own code fails here.
cmake --preset dev -DLLMPROF_WARNINGS_AS_ERRORS=ON
cmake --build --preset dev
# The launcher and Slurm end-to-end tests (tests/e2e/ranks_test.cpp, tests/e2e/slurm_test.cpp) skip
# where mpirun is missing or a single-node Slurm cannot start (each Slurm test starts its own with
# scripts/cluster.sh); here install-deps.sh installed them, so a skip would hide a broken setup: make it a failure.
export LLMPROF_REQUIRE_CLUSTER=1
# install-deps.sh unpacked the real Nsight tools: their end-to-end tests must run, not skip.
export LLMPROF_REQUIRE_REAL_TOOLS="${LLMPROF_REQUIRE_REAL_TOOLS:-1}"
ctest --preset dev "$@"
# The quick start's release build: unity translation units (CMakePresets.json), so a name two source files of a
# unity batch both define at file scope fails here, not on a user's first build.
cmake --preset release -DLLMPROF_BUILD_TESTS=OFF
cmake --build --preset release --target deep-profile
# The quick start itself on a fresh Debian 12 root (debootstrap, chroot; about 5 min): the main job's packages must be
# all it needs (a fresh root found the Nsight importer's libpfm4 missing). Needs root for the chroot and its mounts.
# Needs root that may mount (a container without CAP_SYS_ADMIN may not) and Debian's mirror; it tests HEAD, not
# uncommitted changes. LLMPROF_FRESH_QUICKSTART=0 skips it.
can_mount() {
  local probe; probe="$(mktemp -d)"
  mount -t tmpfs tmpfs "$probe" 2> /dev/null && umount "$probe" && rmdir "$probe" && return 0
  rmdir "$probe"; return 1
}
if [ "${LLMPROF_FRESH_QUICKSTART:-1}" != 1 ]; then
  echo "test.sh: the quick start on a fresh Debian 12 root is not run (LLMPROF_FRESH_QUICKSTART=0)"
elif [ "$(id -u)" -ne 0 ] || ! can_mount; then
  echo "test.sh: the quick start on a fresh Debian 12 root is not run: it needs root that may mount"
else
  bench/quickstart_fresh.sh
fi
