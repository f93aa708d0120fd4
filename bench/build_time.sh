#!/usr/bin/env bash
# Times what the quick start builds (deep-profile, release, static Boost, no tests) from an empty build folder
# with ccache off, in several build-system variants side by side in one run, and what the widely included
# headers cost a translation unit. The baseline is the first variant, file by file (issue 35).
# Usage: bench/build_time.sh [--variants "plain pch unity unity-pch"] [--target deep-profile] [--out DIR]
#   plain       one object per source (CMAKE_UNITY_BUILD=OFF)
#   pch         plain + LLMPROF_PRECOMPILED_HEADERS=ON
#   unity       CMAKE_UNITY_BUILD=ON (the release preset)
#   unity-pch   unity + LLMPROF_PRECOMPILED_HEADERS=ON
# Prints one line per variant: wall and CPU seconds and the ratio of each against the first variant; then, from
# the plain build's own log, the translation units that include <boost/json.hpp> and their share of the CPU
# time; then each header's cost alone (g++ -fsyntax-only, the release flags), best of three.
set -euo pipefail
source_dir="$(cd "$(dirname "$0")/.." && pwd)"
variants="plain pch unity unity-pch"
target=deep-profile
out="$(mktemp -d /tmp/llmprof-build-time.XXXXXX)"
while [ $# -gt 0 ]; do
  case "$1" in
    --variants) variants="$2"; shift 2 ;;
    --target) target="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build_time.sh: unknown option '$1' (valid: --variants, --target, --out)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
export CCACHE_DISABLE=1
jobs="$(nproc)"
echo "build_time.sh: target $target, $jobs jobs, ccache off, build folders under $out"

configure_flags() {
  case "$1" in
    plain) echo "-DCMAKE_UNITY_BUILD=OFF -DLLMPROF_PRECOMPILED_HEADERS=OFF" ;;
    pch) echo "-DCMAKE_UNITY_BUILD=OFF -DLLMPROF_PRECOMPILED_HEADERS=ON" ;;
    unity) echo "-DCMAKE_UNITY_BUILD=ON -DLLMPROF_PRECOMPILED_HEADERS=OFF" ;;
    unity-pch) echo "-DCMAKE_UNITY_BUILD=ON -DLLMPROF_PRECOMPILED_HEADERS=ON" ;;
    *) echo "build_time.sh: unknown variant '$1' (valid: plain, pch, unity, unity-pch)" >&2; return 2 ;;
  esac
}

# seconds: wall user+sys, from /usr/bin/time's format
baseline_wall="" baseline_cpu=""
printf '%-10s %9s %9s %8s %8s\n' variant wall_s cpu_s wall_x cpu_x
for variant in $variants; do
  flags="$(configure_flags "$variant")"
  build="$out/$variant"
  rm -rf "$build"
  # shellcheck disable=SC2086  # the flags are words
  /usr/bin/time -f '%e %U %S' -o "$out/$variant.time" sh -c \
    "cmake -S '$source_dir' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMPROF_STATIC_BOOST=ON \
       -DLLMPROF_BUILD_TESTS=OFF -DLLMPROF_BUILD_BENCH=OFF -DLLMPROF_BUILD_EXAMPLES=OFF \
       -DCMAKE_CXX_COMPILER_LAUNCHER= $flags > '$out/$variant.log' 2>&1 &&
     cmake --build '$build' --target $target -j $jobs >> '$out/$variant.log' 2>&1" ||
    { echo "build_time.sh: variant $variant failed; see $out/$variant.log" >&2; exit 1; }
  read -r wall user sys < "$out/$variant.time"
  cpu="$(echo "$user + $sys" | bc)"
  if [ -z "$baseline_wall" ]; then baseline_wall="$wall"; baseline_cpu="$cpu"; fi
  printf '%-10s %9.1f %9.1f %8.2f %8.2f\n' "$variant" "$wall" "$cpu" \
    "$(echo "$wall / $baseline_wall" | bc -l)" "$(echo "$cpu / $baseline_cpu" | bc -l)"
done

if [ -d "$out/plain" ]; then
  echo
  echo "plain build: translation units by what they include (times from .ninja_log, compile steps only)"
  python3 - "$out/plain" <<'PY'
import subprocess, sys
build = sys.argv[1]
durations = {}
with open(f"{build}/.ninja_log") as log:
    for line in log:
        if line.startswith("#"):
            continue
        start, end, _, output, _ = line.rstrip("\n").split("\t")
        if output.endswith(".o"):
            durations[output] = (int(end) - int(start)) / 1000.0
deps = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
includes, current = {}, None
for line in deps.splitlines():
    if line and not line.startswith(" "):
        current = line.split(":")[0]
        includes[current] = set()
    elif current and line.strip():
        includes[current].add(line.strip())
def share(predicate):
    units = [o for o in durations if predicate(includes.get(o, set()))]
    return len(units), sum(durations[o] for o in units)
total_units, total_s = len(durations), sum(durations.values())
for label, needle in [("boost/json.hpp", "boost/json.hpp"), ("boost/json (any)", "boost/json/"),
                      ("boost/log", "boost/log/"), ("boost/process", "boost/process/"),
                      ("boost/asio", "boost/asio/"), ("toml++", "toml++/"),
                      ("llmprof/deep_profiler.hpp", "llmprof/deep_profiler.hpp")]:
    n, seconds = share(lambda files: any(needle in f for f in files))
    print(f"  {label:28s} {n:4d} of {total_units} units, {seconds:7.1f} of {total_s:.1f} s ({100*seconds/total_s:4.1f}%)")
print("  slowest units:")
for output, seconds in sorted(durations.items(), key=lambda item: -item[1])[:8]:
    print(f"    {seconds:6.1f} s  {output.split('/')[-1]}")
PY
fi

echo
echo "one header alone: g++ -std=c++20 -O2 -fsyntax-only, best of 3 (seconds)"
headers=("<string>" "<vector>" "<filesystem>" "<boost/json.hpp>" "<boost/process/v2/process.hpp>"
         "<boost/log/core.hpp>" "<toml++/toml.h>")
for header in "$source_dir"/libllmprof/include/llmprof/*.hpp; do headers+=("\"llmprof/$(basename "$header")\""); done
for header in "${headers[@]}"; do
  best=""
  for _ in 1 2 3; do
    /usr/bin/time -f '%e' -o "$out/header.time" g++ -std=c++20 -O2 -fsyntax-only -x c++ -DTOML_HEADER_ONLY=1 \
      -I "$source_dir/libllmprof/include" - <<< "#include $header" > "$out/header.log" 2>&1 ||
      { echo "build_time.sh: $header does not compile alone; see $out/header.log" >&2; exit 1; }
    seconds="$(tail -1 "$out/header.time")"
    if [ -z "$best" ] || [ "$(echo "$seconds < $best" | bc)" -eq 1 ]; then best="$seconds"; fi
  done
  printf '  %6.2f  %s\n' "$best" "$header"
done | sort -rn
