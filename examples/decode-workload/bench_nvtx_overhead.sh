#!/usr/bin/env bash
# NVTX overhead with no profiler attached: builds llmprof-decode twice from the same sources (NVTX ranges
# compiled in, and compiled out with -DLLMPROF_EXAMPLE_NVTX=OFF), runs both RUNS times, interleaved so that
# drifting machine load hits both alike, and prints the median decode tokens/s of each and their difference.
#
# Usage: bench_nvtx_overhead.sh [-n RUNS] [-w WORK_DIR] [-p LLMPROF_PREFIX] [-- llmprof-decode flags]
#   default flags: --preset tiny --warmup 2
#   GPU example:   bench_nvtx_overhead.sh -n 7 -- --preset 1b --batch 1
# Without -p, the header-only part of llmprof (llmprof::nvtx, no Boost needed) is installed into WORK_DIR/prefix
# first, so this also exercises the standalone (downstream find_package) build of the example.
set -euo pipefail

runs=9
work=/tmp/llmprof-nvtx-overhead
prefix=""
while getopts "n:w:p:h" option; do
  case $option in
    n) runs=$OPTARG ;;
    w) work=$OPTARG ;;
    p) prefix=$OPTARG ;;
    *) sed -n '2,10p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[[ ${1:-} == "--" ]] && shift
flags=("$@")
[[ ${#flags[@]} -eq 0 ]] && flags=(--preset tiny --warmup 2)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$work"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)

if [[ -z $prefix ]]; then
  prefix=$work/prefix
  echo "== installing llmprof::nvtx into $prefix"
  cmake -S "$repo" -B "$work/llmprof" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DLLMPROF_CORE=OFF -DLLMPROF_BUILD_TESTS=OFF -DLLMPROF_BUILD_APPS=OFF -DLLMPROF_BUILD_EXAMPLES=OFF \
    -DLLMPROF_BUILD_BENCH=OFF >"$work/llmprof-configure.log"
  cmake --install "$work/llmprof" >"$work/llmprof-install.log"
fi

for variant in on off; do
  nvtx=$([[ $variant == on ]] && echo ON || echo OFF)
  echo "== building llmprof-decode with LLMPROF_EXAMPLE_NVTX=$nvtx"
  cmake -S "$repo/examples/decode-workload" -B "$work/build-$variant" "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DLLMPROF_EXAMPLE_NVTX=$nvtx -DLLMPROF_EXAMPLE_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$prefix;$torch_prefix" >"$work/configure-$variant.log" 2>&1 ||
    { cat "$work/configure-$variant.log"; exit 1; }
  cmake --build "$work/build-$variant" --target llmprof-decode -j "${JOBS:-2}" >"$work/build-$variant.log" 2>&1 ||
    { tail -50 "$work/build-$variant.log"; exit 1; }
done

tokens_per_s() { python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["tokens_per_s"])' "$1"; }

echo "== $runs interleaved runs each: llmprof-decode ${flags[*]}"
declare -A results=([on]="" [off]="")
for ((run = 1; run <= runs; ++run)); do
  for variant in on off; do
    metrics=$work/metrics-$variant-$run.json
    "$work/build-$variant/llmprof-decode" "${flags[@]}" --metrics-out "$metrics" >"$work/run-$variant-$run.log" 2>&1 ||
      { cat "$work/run-$variant-$run.log"; exit 1; }
    value=$(tokens_per_s "$metrics")
    results[$variant]+="$value "
    printf '  run %2d  nvtx %-3s  %12.2f tokens/s\n' "$run" "$variant" "$value"
  done
done

python3 - "${results[on]}" "${results[off]}" <<'EOF'
import statistics, sys
on = [float(v) for v in sys.argv[1].split()]
off = [float(v) for v in sys.argv[2].split()]
median_on, median_off = statistics.median(on), statistics.median(off)
spread = lambda values: (max(values) - min(values)) / statistics.median(values) * 100
print(f"median tokens/s  NVTX on: {median_on:.2f}  (spread {spread(on):.1f}%)")
print(f"median tokens/s  NVTX off: {median_off:.2f}  (spread {spread(off):.1f}%)")
print(f"difference (on - off) / off: {(median_on - median_off) / median_off * 100:+.2f}%")
EOF
