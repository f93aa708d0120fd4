#!/usr/bin/env bash
# The `asan` preset's flags (AddressSanitizer + UndefinedBehaviorSanitizer, UB fatal) over the whole test suite,
# built on the GPU machine's 16 cores from the Debian packages carried as .deb files (the same prefix as
# scripts/gpu-build-deep-profile.sh; add catch2_2.13.10 to DEBS_DIR): the 2-core development machine takes
# 30+ minutes for this build. Tests that need the real Debian Nsight tools, mpirun or Slurm skip there (none
# is installed); the lint tests need clang-tidy and are left out.
#
# Usage (repository root on the GPU machine): scripts/gpu-verify-sanitizers.sh DEBS_DIR [BUILD_DIR]
# Writes $OUT/asan-ctest.log and $OUT/asan-summary.txt (passed, failed, skipped counts; sanitizer reports).
set -uo pipefail
debs=$1
build_dir=${2:-/tmp/asan-build}
OUT=${OUT:-/tmp/llmprof-out}
mkdir -p "$OUT"
prefix=/tmp/llmprof-debs
if [ ! -f "$prefix/usr/include/catch2/catch.hpp" ]; then
  mkdir -p "$prefix"
  for f in "$debs"/*.deb; do dpkg -x "$f" "$prefix"; done
fi
lib=$prefix/usr/lib/x86_64-linux-gnu
mkdir -p "$prefix/icu-stub"  # why: scripts/gpu-build-deep-profile.sh (Debian's static Boost.Regex names ICU 72)
for name in icudata icui18n icuuc; do [ -f "$prefix/icu-stub/lib$name.a" ] || ar rc "$prefix/icu-stub/lib$name.a"; done
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
start=$SECONDS
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLMPROF_STATIC_BOOST=ON \
  -DLLMPROF_BUILD_EXAMPLES=OFF -DLLMPROF_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="$sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined -L$prefix/icu-stub" \
  -DCMAKE_PREFIX_PATH="$prefix/usr;$lib/cmake" -DBoost_NO_SYSTEM_PATHS=ON -DBoost_ROOT="$prefix/usr" \
  -DSQLite3_INCLUDE_DIR="$prefix/usr/include" -DSQLite3_LIBRARY="$lib/libsqlite3.a" \
  -DLLMPROF_SQLITE_STATIC="$lib/libsqlite3.a" > "$OUT/asan-configure.log" 2>&1 ||
  { tail -40 "$OUT/asan-configure.log"; exit 1; }
cmake --build "$build_dir" -j"$(nproc)" > "$OUT/asan-build.log" 2>&1 ||
  { grep -m30 -E 'error|Error' "$OUT/asan-build.log"; exit 1; }
echo "asan build: $((SECONDS - start)) s"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
start=$SECONDS
(cd "$build_dir" && ctest -LE lint -j"$(nproc)" --timeout 600 --output-on-failure) > "$OUT/asan-ctest.log" 2>&1
rc=$?
{
  echo "asan ctest exit $rc in $((SECONDS - start)) s"
  grep -E "tests passed|tests failed" "$OUT/asan-ctest.log"
  echo "skipped: $(grep -c '(Skipped)' "$OUT/asan-ctest.log" || true)"
  echo "sanitizer reports: $(grep -c -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$OUT/asan-ctest.log" || true)"
  sed -n '/The following tests FAILED/,$p' "$OUT/asan-ctest.log"
} | tee "$OUT/asan-summary.txt"
exit $rc
