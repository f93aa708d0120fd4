#!/usr/bin/env bash
# Installs every Debian 12 package that libllmprof's build, tests, fuzzers and example need.
# Called by a new user (README quick start) and by .ci/run; safe to run again.
# Usage: scripts/install-deps.sh [--main-job] [--no-torch] [--no-browser] [--no-nsight]
# --no-nsight skips the real Nsight tools (see scripts/install-nsight.sh and third_party/README.md).
# --main-job installs only what scripts/quickstart.sh builds and runs (deep-profile, the example, the Nsight
# tools): no test framework, clang/clang-tidy, browser, Slurm, munge or Open MPI, which only the tests use.
set -euo pipefail
with_torch=1
with_browser=1
with_nsight=1
main_job=0
for arg in "$@"; do
  case "$arg" in
    --main-job) main_job=1; with_browser=0 ;;
    --no-torch) with_torch=0 ;;
    --no-browser) with_browser=0 ;;
    --no-nsight) with_nsight=0 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (valid: --main-job, --no-torch, --no-browser, --no-nsight)" >&2; exit 2 ;;
  esac
done
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ninja-build ccache pkg-config python3
  libboost1.81-dev libboost-json1.81-dev libboost-log1.81-dev libboost-program-options1.81-dev
  libboost-filesystem1.81-dev
  libtomlplusplus-dev
  libsqlite3-dev sqlite3
)
if [ "$main_job" -eq 0 ]; then
  packages+=(
    catch2 clang libclang-rt-14-dev clang-tidy
    # A single-node Slurm and Open MPI for the multi-rank end-to-end tests (scripts/cluster.sh).
    slurmctld slurmd slurm-client munge openmpi-bin
    # A fresh Debian 12 root for the quick start's own test (bench/quickstart_fresh.sh).
    debootstrap
  )
fi
if [ "$with_torch" -eq 1 ]; then packages+=(libtorch-dev libgloo-dev); fi
if [ "$with_browser" -eq 1 ]; then packages+=(chromium); fi
# The Debian QdstrmImporter (turns nsys's .qdstrm into a .nsys-rep) links libssh.so.4 and libpfm.so.4. libpfm4
# came with clang's LLVM on machines with the test packages; a fresh machine with --main-job lacked it and the
# quick start's nsys stage failed (issue 35, measured in a fresh Debian 12 root: bench/quickstart_fresh.sh).
if [ "$with_nsight" -eq 1 ]; then packages+=(libssh-4 libpfm4); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
else
  echo "install-deps.sh: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "$with_nsight" -eq 1 ]; then
  "${sudo_cmd[@]}" env ${LLMPROF_NSIGHT_DIR:+LLMPROF_NSIGHT_DIR="$LLMPROF_NSIGHT_DIR"} "$(dirname "$0")/install-nsight.sh"
fi
