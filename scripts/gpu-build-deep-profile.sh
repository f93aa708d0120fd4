#!/usr/bin/env bash
# Builds a release deep-profile ON the GPU machine, from Debian 12's Boost 1.81 / toml++ / SQLite packages
# carried as .deb files, instead of carrying a binary built on the 2-core development machine (a release
# build there takes 15+ minutes; here, on 16 cores, about a minute). The GPU machine has Boost 1.83 headers
# but no compiled Boost and no toml++, so the carried packages are unpacked into a private prefix.
#
# Usage (repository root on the GPU machine):
#   scripts/gpu-build-deep-profile.sh DEBS_DIR [SOURCE_DIR] [BUILD_DIR]
# DEBS_DIR holds libboost1.81-dev, libboost-{json,log,program-options,filesystem,thread,atomic,chrono,
# date-time,regex,system,container}1.81-dev, libtomlplusplus-dev, libtomlplusplus3 and libsqlite3-dev
# (`apt-get download` them, or copy them from /var/cache/apt/archives after scripts/install-deps.sh).
# Prints the binary's path on its last line.
set -euo pipefail
debs=$1
source_dir=${2:-$PWD}
build_dir=${3:-/tmp/dp-build}
prefix=/tmp/llmprof-debs
if [ ! -d "$prefix/usr/include/boost" ]; then
  mkdir -p "$prefix"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
fi
lib=$prefix/usr/lib/x86_64-linux-gnu
# Debian's static Boost.Regex names ICU 72 on its link line (-licuuc ...), which the GPU machine lacks; no object
# deep-profile pulls from it calls ICU (the link succeeded with these empty archives on the H100 machine), so
# empty archives satisfy the names and a real ICU reference would still fail the link loudly.
mkdir -p "$prefix/icu-stub"
for name in icudata icui18n icuuc; do [ -f "$prefix/icu-stub/lib$name.a" ] || ar rc "$prefix/icu-stub/lib$name.a"; done
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMPROF_STATIC_BOOST=ON \
  -DLLMPROF_BUILD_TESTS=OFF -DLLMPROF_BUILD_EXAMPLES=OFF -DLLMPROF_BUILD_BENCH=OFF \
  -DCMAKE_PREFIX_PATH="$prefix/usr;$lib/cmake" -DBoost_NO_SYSTEM_PATHS=ON -DBoost_ROOT="$prefix/usr" \
  -DSQLite3_INCLUDE_DIR="$prefix/usr/include" -DSQLite3_LIBRARY="$lib/libsqlite3.a" \
  -DLLMPROF_SQLITE_STATIC="$lib/libsqlite3.a" -DCMAKE_EXE_LINKER_FLAGS="-L$prefix/icu-stub" > "$build_dir.configure.log" 2>&1 ||
  { tail -40 "$build_dir.configure.log" >&2; exit 1; }
cmake --build "$build_dir" --target deep-profile -j"$(nproc)" > "$build_dir.build.log" 2>&1 ||
  { grep -m20 -E 'error|Error' "$build_dir.build.log" >&2; tail -20 "$build_dir.build.log" >&2; exit 1; }
echo "$build_dir/apps/deep-profile/deep-profile"
