#!/usr/bin/env bash
# Issue 11 on the GPU machine (H100, Nsight Systems/Compute 2025.3.1): the same code that CI runs against
# Debian's nsys 2022.4 / ncu 2022.3, here against 2025.3.1. Leaves logs and small results in $OUT.
#
# Usage (repository root on the GPU machine; needs .carry/deep-profile, a static release build from the
# development machine, and .carry/libdw1_*.deb + .carry/libelf1_*.deb, as scripts/gpu-verify.sh):
#   scripts/gpu-verify-realtools.sh
# What it proves, one step each (exit status echoed after each):
#   1. probe as installed: 2025.3 report names listed, the importer's missing libdw.so.1 diagnosed (degraded)
#   2. probe with libdw carried: ready; the abilities list says tensor-core FLOP per kernel: yes
#   3. a gated run of the 1b example (top-3): stats under the 2025.3 names, exit 0
#   4. a gate that never opens: the diagnosis naming the emitted ranges, exit 1
#   5. torch.profiler inside the workload: the CUPTI conflict recorded as a warning of nsys and ncu
#   6. --capture-range-end=stop-shutdown: nsys exits 143, the stage notes it and stays ok
set -uo pipefail
OUT=${OUT:-/tmp/llmprof-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/verify-realtools.log") 2>&1
repo=$PWD
dp=$repo/.carry/deep-profile
export LLMPROF_CONFIG_DIR=$repo/config PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }
runs=/tmp/realtools-runs
rm -rf "$runs"

torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
ex=/tmp/ex/examples/decode-workload/llmprof-decode
if [ ! -x "$ex" ]; then
  step "build the example"
  cmake -S "$repo" -B /tmp/ex -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMPROF_CORE=OFF -DLLMPROF_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$torch_prefix" > /tmp/ex.configure.log 2>&1 &&
    cmake --build /tmp/ex --target llmprof-decode -j16 > /tmp/ex.build.log 2>&1 || { tail -30 /tmp/ex.*.log; exit 1; }
fi
run() {  # $1 run id, then deep-profile run arguments
  local id=$1; shift
  /usr/bin/time -f "$id wall %e s" "$dp" run --set run.runs_root="$runs" --set run.run_id="$id" "$@"
  echo "$id exit=$?"
}

step "1. probe as installed"
"$dp" probe; echo "probe exit=$?"
"$dp" probe --json > "$OUT/probe-2025.3-as-installed.json"

step "2. probe with libdw carried"
mkdir -p /tmp/dw && for f in .carry/libdw1_*.deb .carry/libelf1_*.deb; do dpkg -x "$f" /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$dp" probe | tee "$OUT/probe-2025.3.txt"; echo "probe exit=${PIPESTATUS[0]}"
"$dp" probe --json > "$OUT/probe-2025.3.json"

step "3. gated run, 1b bf16, top-3 (top-3 keeps the old-plan ncu stage short: device time is scarce; top-10 took 232 s)"
run h100-gated --set run.top_n_kernels=3 -- "$ex" --preset 1b --warmup 1
ls "$runs/h100-gated/nsys/" | grep summary_

step "4. a gate that never opens"
run h100-gate-never --set nsys.nvtx_capture=range --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1

step "5. CUPTI conflict: torch.profiler inside the workload"
run h100-cupti --set run.top_n_kernels=3 -- python3 "$repo/tests/data/h100-nsight-2025.3/cli/workload_cupti_conflict.py"
grep -h -o 'CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED[^"]*' "$runs/h100-cupti/run.json" | head -3

step "6. --capture-range-end=stop-shutdown"
run h100-stop-shutdown --set nsys.capture_range_end=stop-shutdown --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1

(cd "$runs" && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
   -czf "$OUT/realtools-runs.tar.gz" .)
echo "results: $OUT (verify-realtools.log, probe-2025.3*.json/txt, realtools-runs.tar.gz)"
