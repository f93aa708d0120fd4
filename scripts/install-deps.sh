#!/usr/bin/env bash
# Installs every Debian 12 package that libllmprof's build, tests, fuzzers and example need.
# Called by a new user (README quick start) and by .ci/run; safe to run again.
# Usage: scripts/install-deps.sh [--no-torch] [--with-browser]
set -euo pipefail
with_torch=1
with_browser=1
for arg in "$@"; do
  case "$arg" in
    --no-torch) with_torch=0 ;;
    --no-browser) with_browser=0 ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (valid: --no-torch, --no-browser)" >&2; exit 2 ;;
  esac
done
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake ninja-build ccache pkg-config python3
  libboost1.81-dev libboost-json1.81-dev libboost-log1.81-dev libboost-program-options1.81-dev
  libboost-filesystem1.81-dev
  libtomlplusplus-dev catch2
  libsqlite3-dev sqlite3
  clang libclang-rt-14-dev
  # A single-node Slurm and Open MPI for the multi-rank end-to-end tests (scripts/cluster.sh).
  slurmctld slurmd slurm-client munge openmpi-bin
)
if [ "$with_torch" -eq 1 ]; then packages+=(libtorch-dev); fi
if [ "$with_browser" -eq 1 ]; then packages+=(chromium); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "install-deps.sh: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
