#!/usr/bin/env bash
# Per-rank GPU-metrics sampling (issue 36) on the GPU machine (Nsight 2025.3.1). A one-GPU machine runs two
# ranks on the same GPU: what nsys does when two sessions sample one GPU, what the export says of the GPU
# it sampled (to match a rank's GPU to a sampled one on a multi-GPU node), and two ranks' captures, one of
# them sampling, as fixtures for the cross-capture attribution.
#
# Usage (repository root on the GPU machine): scripts/gpu-verify-ranks.sh PHASE...
#   explore   the example built; two concurrent captures of the 1b decode (12 tokens) twice: rank 0 sampling
#             every GPU and rank 1 not, then both sampling; a capture with --gpu-metrics-devices=cuda-visible;
#             each export's GPU identity, sources and clock; the first pair's exports trimmed (bus kept)
#   alignment two torchrun ranks on one GPU (200 tokens), twice: the lag correlation finds against the clock origins'
#   final     one two-rank run of this tree, and the single-rank report's sampled notes
#   pipeline  deep-profile run under `torchrun --nproc-per-node 2 --no-python` (two ranks, one GPU), default
#             settings and the sampled preset; run.json, report.json, ranks.csv/md, logs into ranks-runs.tar.gz
# Results under $OUT: ranks.log, identity.txt, fixtures.tar.gz, ranks-runs.tar.gz.
set -uo pipefail
# shellcheck source=scripts/gpu-verify-coverage.sh
source "$(dirname "$0")/gpu-verify-coverage.sh"
exec > >(tee -a "$OUT/ranks.log") 2>&1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
SAMPLE=(--gpu-metrics-devices=all --gpu-metrics-frequency=20000)

capture() {  # $1 name, then nsys sampling words; the 1b decode (TOKENS tokens, default 12), gated on decode
  local name=$1; shift
  timeout 150 "$NSYS" profile --trace=cuda,nvtx --sample=none --cpuctxsw=none --capture-range=nvtx --nvtx-capture=decode \
    --capture-range-end=stop --env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "$@" --force-overwrite=true \
    --output="/tmp/ranks/$name" "$ex" --preset 1b --warmup 1 --new-tokens "${TOKENS:-12}" > "/tmp/ranks/$name.log" 2>&1
  echo "$name: nsys exit $?"
  timeout 60 "$NSYS" export --type sqlite --force-overwrite=true --output="/tmp/ranks/$name.sqlite" "/tmp/ranks/$name.nsys-rep" \
    > "/tmp/ranks/$name.export.log" 2>&1 || echo "$name: export failed"
}

identity() {  # $1 name: what the export says of its GPUs, samples and clock
  echo "--- $1 ($(grep -ciE 'gpu.?metric|error|warn' "/tmp/ranks/$1.log") sampling/error lines in its log)"
  grep -iE 'gpu.?metric|error|warn|fail' "/tmp/ranks/$1.log" | head -8
  python3 - "/tmp/ranks/$1.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
def show(sql, limit=12):
    try:
        for row in db.execute(sql).fetchmany(limit):
            print("   ", tuple(str(v)[:600] for v in row))
    except Exception as error:
        print("    (", error, ")")
print("  tables:", sorted(t for t in tables if t.startswith(("TARGET_INFO", "GENERIC", "GPU"))))
print("  TARGET_INFO_GPU:"); show("SELECT id, name, busLocation, uuid, pwGpuId, cuDevice, vmId FROM TARGET_INFO_GPU")
print("  session start:"); show("SELECT * FROM TARGET_INFO_SESSION_START_TIME")
print("  GENERIC_EVENT_SOURCES:"); show("SELECT * FROM GENERIC_EVENT_SOURCES")
print("  GENERIC_EVENT_TYPES (GPU metrics):"); show("SELECT * FROM GENERIC_EVENT_TYPES WHERE typeId IN (SELECT typeId FROM TARGET_INFO_GPU_METRICS)", 4)
print("  GPU_METRICS by typeId:"); show("SELECT typeId, count(*), min(timestamp), max(timestamp) FROM GPU_METRICS GROUP BY typeId")
print("  sources in TARGET_INFO_GPU_METRICS:"); show("SELECT DISTINCT typeId, sourceId, typeName FROM TARGET_INFO_GPU_METRICS")
print("  kernels by device:"); show("SELECT deviceId, count(*), min(start), max(end) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY deviceId")
print("  decode ranges:"); show("SELECT count(*), min(e.start), max(e.end) FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId WHERE coalesce(e.text, s.value) = 'decode_step'")
print("  analysis details:"); show("SELECT * FROM ANALYSIS_DETAILS")
PY
}

phase_explore() {
  build_example || return 1
  use_carried_libdw
  mkdir -p /tmp/ranks "$OUT"
  "$NSYS" profile --gpu-metrics-devices=help 2>&1 | head -8
  step "pair 1: rank 0 samples every GPU, rank 1 does not (one GPU, two processes)"
  # wait names its jobs: a bare `wait` also waits for the log's tee (a process substitution), for ever.
  capture pair1-r0 "${SAMPLE[@]}" & local first=$!
  capture pair1-r1 & wait "$first" $!
  step "pair 2: both sample every GPU"
  capture pair2-r0 "${SAMPLE[@]}" & first=$!
  capture pair2-r1 "${SAMPLE[@]}" & wait "$first" $!
  step "cuda-visible"
  CUDA_VISIBLE_DEVICES=0 capture visible --gpu-metrics-devices=cuda-visible --gpu-metrics-frequency=20000
  {
    for name in pair1-r0 pair1-r1 pair2-r0 pair2-r1 visible; do identity "$name"; done
  } | tee "$OUT/identity.txt"
  mkdir -p /tmp/fixtures
  for name in pair1-r0 pair1-r1 pair2-r0 pair2-r1; do
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "/tmp/ranks/$name.sqlite" "/tmp/fixtures/$name.sqlite" --keep-gpu-bus &&
      ls -l "/tmp/fixtures/$name.sqlite"
  done
  cp /tmp/ranks/*.log /tmp/fixtures/
  tar -czf "$OUT/fixtures.tar.gz" -C /tmp fixtures
}

# Two ranks whose decodes overlap for sure (120 tokens, about 2 s each): which clock origin lines rank 1's
# kernels up with the GPU activity rank 0's samples saw is found offline (tests/tools/rank_clock_offset.py).
phase_overlap() {
  build_example || return 1
  use_carried_libdw
  mkdir -p /tmp/ranks /tmp/fixtures
  step "pair 3: rank 0 samples, rank 1 does not, 120 tokens each"
  TOKENS=120 capture pair3-r0 "${SAMPLE[@]}" & local first=$!
  TOKENS=120 capture pair3-r1 & wait "$first" $!
  { identity pair3-r0; identity pair3-r1; } | tee -a "$OUT/identity.txt"
  python3 - /tmp/ranks/pair3-r0.sqlite <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("  source names:", db.execute("SELECT s.sourceId, t.value FROM GENERIC_EVENT_SOURCES s LEFT JOIN StringIds t ON t.id = s.nameId").fetchall())
print("  type names:", db.execute("SELECT g.typeId, t.value FROM GENERIC_EVENT_TYPES g LEFT JOIN StringIds t ON t.id = g.nameId WHERE g.typeId IN (SELECT typeId FROM TARGET_INFO_GPU_METRICS)").fetchall()[:4])
PY
  for name in pair3-r0 pair3-r1; do
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "/tmp/ranks/$name.sqlite" "/tmp/fixtures/$name.sqlite" --keep-gpu-bus &&
      ls -l "/tmp/fixtures/$name.sqlite"
  done
  cp /tmp/ranks/pair3*.log /tmp/fixtures/
  tar -czf "$OUT/overlap.tar.gz" -C /tmp fixtures
}

phase_pipeline() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  local launcher='torchrun --nproc-per-node 2 --no-python'
  local decode=("$ex" --preset 1b --warmup 1 --new-tokens 120)
  profile "$dp_new" /tmp/runs-ranks two-ranks --launcher "$launcher" --set run.enable_ncu=false -- "${decode[@]}"
  profile "$dp_new" /tmp/runs-ranks two-ranks-sampled --preset sampled --launcher "$launcher" -- "${decode[@]}"
  # Both ranks see the one GPU alone (CUDA_VISIBLE_DEVICES=0): the first to claim it samples (cuda-visible).
  CUDA_VISIBLE_DEVICES=0 profile "$dp_new" /tmp/runs-ranks two-ranks-visible --launcher "$launcher" \
    --set run.enable_ncu=false -- "${decode[@]}"
  for run in two-ranks two-ranks-sampled two-ranks-visible; do
    step "$run: who sampled, ranks.csv, the Across ranks section"
    grep -ho '"gpu_metrics.*' /tmp/runs-ranks/$run/ranks/r*/nsys/status.json
    grep -ho -- '--gpu-metrics-devices=[a-z-]*' /tmp/runs-ranks/$run/ranks/r*/nsys/cmd.txt
    cat /tmp/runs-ranks/$run/analysis/ranks.csv
    sed -n '/Sampled by the GPU/,/^$/p;/Sampled by the GPU/,/^- /p' /tmp/runs-ranks/$run/analysis/ranks.md | head -12
    local sampler other
    sampler=$(grep -l '"gpu_metrics":"[0-9a-z]' /tmp/runs-ranks/$run/ranks/r*/nsys/status.json | head -1 | xargs dirname)
    for r in /tmp/runs-ranks/$run/ranks/r*/nsys; do [ "$r" != "$sampler" ] && other=$r; done
    [ "$run" = two-ranks ] && [ -n "$sampler" ] && python3 "$repo/tests/tools/rank_clock_offset.py" \
      "$sampler/profile.sqlite" "$other/profile.sqlite"
  done
  pack /tmp/runs-ranks ranks-runs.tar.gz
}

# The clock-origin alignment inside the pipeline: two torchrun ranks on one GPU, twice, each pair's exports searched
# for the lag that lines rank 1's kernels up with rank 0's samples, around the lag the origins give.
phase_alignment() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  local launcher='torchrun --nproc-per-node 2 --no-python'
  local decode=("$ex" --preset 1b --warmup 1 --new-tokens 200)
  for run in align-1 align-2; do
    profile "$dp_new" /tmp/runs-align "$run" --launcher "$launcher" --set run.enable_ncu=false -- "${decode[@]}" |
      grep -E "sampling|exit="
    grep -h "^[01]," /tmp/runs-align/$run/analysis/ranks.csv
    python3 "$repo/tests/tools/rank_clock_offset.py" /tmp/runs-align/$run/ranks/r0/nsys/profile.sqlite \
      /tmp/runs-align/$run/ranks/r1/nsys/profile.sqlite
  done
}

# The final tree once: two torchrun ranks on one GPU, and what the single-rank report says of its samples.
phase_final() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  profile "$dp_new" /tmp/runs-final two-ranks --launcher 'torchrun --nproc-per-node 2 --no-python' \
    --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1 --new-tokens 120 | grep -E "sampl|exit="
  cat /tmp/runs-final/two-ranks/analysis/ranks.csv
  python3 - /tmp/runs-final/two-ranks/analysis/report.json <<'PY'
import json, sys
for stage in json.load(open(sys.argv[1]))["stages"]:
    if stage["name"] in ("decode", "decode_step"):
        print(stage["name"], stage.get("sampled_samples"), stage.get("sampled_dram_bytes_per_step"), stage.get("sampled_note"))
PY
}

for phase in "$@"; do
  "phase_$phase" || echo "phase $phase failed"
done
