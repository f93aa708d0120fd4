#!/usr/bin/env bash
# GPU-metrics sampling (issue 36) and ncu's per-launch-config counting (issue 35) on the GPU machine
# (H100/H200, Nsight 2025.3.1). Reuses the build and run helpers of scripts/gpu-verify-coverage.sh.
#
# Usage (repository root on the GPU machine): scripts/gpu-verify-sampling.sh PHASE...
#   build     as in gpu-verify-coverage.sh
#   counting  does --filter-mode per-launch-config count per (function, configuration) or per configuration
#             across the functions a --kernel-name regex lists? One ncu pass over the 1b example's two planned
#             regexes (examples/speed-h200/after-1-1b/ncu/cmd.txt) at --launch-count 1 with a cheap metric: the
#             rows name every (mangled name, grid, block, shared memory) profiled
#   record    the 1b eager and --cuda-graphs examples bare (their ms/token), then deep-profile with defaults and
#             nsys sampling GPU metrics (RECORD_FREQUENCY, default 20000 Hz) on 1b, graphs and serving, and 1b
#             without ncu; the help listings of the GPU-metrics devices and sets; trimmed exports
#   sampled   this tree's defaults (GPU-metrics sampling on by itself) on SAMPLED_RUNS (default "1b 1b serving
#             1b-load sampled graphs"; "sampled" = the 1b example under --preset sampled, after a bare run of it;
#             "sampled-cuda" the same with CUDA traced);
#             each run's run.json, report.json, stages.csv, report.md, plan.log and log into $OUT/reports.tar.gz
#             as soon as it ends (the device returns at most a few files)
#   nsystime  the 1b example bare twice, then nsys profile with the pipeline's flags, each output line timestamped:
#             NSYSTIME_VARIANTS (default "sampled unsampled sampled-inline"; nvtx-sampled: --trace=nvtx with
#             sampling); the export's own time
# Results under $OUT: sampling.log, coverage.tsv, counting.csv, fixtures/, *-runs.tar.gz.
set -uo pipefail
# shellcheck source=scripts/gpu-verify-coverage.sh
source "$(dirname "$0")/gpu-verify-coverage.sh"
exec > >(tee -a "$OUT/sampling.log") 2>&1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys

phase_counting() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  local cmd=examples/speed-h200/after-1-1b/ncu/cmd.txt
  # The alternatives inside each pass's ^(?:...)$, joined into one regex.
  local names; names=$(grep -o "regex:\^(?:[^)]*)\\$'" "$cmd" | sed -e "s/^regex:^(?://" -e "s/)\\$'$//" | paste -sd'|')
  step "counting: ncu --filter-mode per-launch-config --launch-count 1 over $(echo "$names" | tr '|' '\n' | sort -u | wc -l) names"
  local start=$SECONDS
  ncu --target-processes all --nvtx --nvtx-include decode/ --kernel-name-base mangled \
    --kernel-name "regex:^(?:$names)$" --launch-skip 0 --launch-count 1 --filter-mode per-launch-config \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__shared_mem_per_block_dynamic \
    -f -o /tmp/counting "$ex" --preset 1b --warmup 1 > /tmp/counting.log 2>&1
  echo "ncu exit=$? $((SECONDS - start)) s; $(grep -c '==PROF== Profiling' /tmp/counting.log) launches profiled"
  ncu --import /tmp/counting.ncu-rep --page raw --csv --print-kernel-base mangled > "$OUT/counting.csv"
  tail -5 /tmp/counting.log
  python3 - "$OUT/counting.csv" <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))[1:]  # the first row after the header is units
by_config = collections.defaultdict(set)
for r in rows:
    by_config[(r["Grid Size"], r["Block Size"], r.get("launch__shared_mem_per_block_dynamic", ""))].add(r["Kernel Name"])
shared = {k: v for k, v in by_config.items() if len(v) > 1}
print(f"{len(rows)} rows, {len({r['Kernel Name'] for r in rows})} functions, {len(by_config)} configurations;"
      f" configurations profiled under more than one function: {len(shared)}")
for k, v in shared.items():
    print("  ", k, len(v), "functions")
PY
}

nsys_metrics_args() {  # $1 frequency
  echo "--set nsys.extra_args=[\"--gpu-metrics-devices=all\",\"--gpu-metrics-frequency=$1\"]"
}

bare() {  # $1 label, then the workload
  local label=$1; shift
  step "bare $label"
  /usr/bin/time -f "$label bare wall %e s" "$@" 2>&1 | grep -iE "ms/token|tokens/s|wall|per token" | tail -4
}

phase_record() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  step "GPU-metrics devices and sets"
  "$NSYS" profile --gpu-metrics-devices=help > "$OUT/gpu_metrics_devices_help.txt" 2>&1
  "$NSYS" profile --gpu-metrics-set=help > "$OUT/gpu_metrics_set_help.txt" 2>&1
  cat "$OUT"/gpu_metrics_*_help.txt
  bare 1b "$ex" --preset 1b --warmup 1
  bare graphs "$ex" --preset 1b --warmup 1 --cuda-graphs
  local hz=${RECORD_FREQUENCY:-20000}
  # shellcheck disable=SC2046
  profile "$dp_new" /tmp/runs-record "1b-nsys-only" $(nsys_metrics_args "$hz") --set run.enable_ncu=false -- $(workload 1b)
  # shellcheck disable=SC2046
  profile "$dp_new" /tmp/runs-record "1b" $(nsys_metrics_args "$hz") -- $(workload 1b)
  # shellcheck disable=SC2046
  profile "$dp_new" /tmp/runs-record "graphs" $(nsys_metrics_args "$hz") -- $(workload graphs)
  # shellcheck disable=SC2046
  profile "$dp_new" /tmp/runs-record "serving" --preset serving $(nsys_metrics_args "$hz") -- $(workload serving)
  trim_exports /tmp/runs-record
  pack /tmp/runs-record record-runs.tar.gz
}

trim_exports() {  # $1 runs root: every export, trimmed, and cut to 24 steps where it has more
  mkdir -p "$OUT/fixtures"
  find "$1" -name '*.sqlite' -path '*/nsys/*' | while read -r export; do
    local name; name=$(echo "${export#"$1"/}" | tr '/' '_')
    ls -l "$export"
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "$export" "$OUT/fixtures/$name" && ls -l "$OUT/fixtures/$name"
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "$export" "$OUT/fixtures/cut24_$name" --until decode_step:24 &&
      ls -l "$OUT/fixtures/cut24_$name"
  done
}

phase_sampled() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  local round=0
  for name in ${SAMPLED_RUNS:-1b 1b serving 1b-load sampled graphs}; do
    round=$((round + 1))
    local extra=()
    case $name in
      serving) extra=(--preset serving) ;;
      sampled) bare 1b "$ex" --preset 1b --warmup 1; extra=(--preset sampled); name=1b-sampled ;;
      sampled-cuda) extra=(--preset sampled --set 'nsys.trace=["cuda","nvtx"]'); name=1b-sampled-cuda ;;
    esac
    local workload_name=${name%%-sampled*}
    # shellcheck disable=SC2046
    profile "$dp_new" /tmp/runs-sampled "s$round-$name" "${extra[@]}" -- $(workload "$workload_name")
    mkdir -p "/tmp/reports/s$round-$name"
    for f in run.json analysis/report.json analysis/stages.csv analysis/report.md ncu/plan.log deep-profile.log; do
      [ -f "/tmp/runs-sampled/s$round-$name/$f" ] && cp "/tmp/runs-sampled/s$round-$name/$f" "/tmp/reports/s$round-$name/"
    done
    tar -czf "$OUT/reports.tar.gz" -C /tmp reports
  done
  true
}

stamp() {  # the command's output lines, each with the seconds since it started, then its exit status
  python3 -c '
import subprocess, sys, time
start = time.monotonic()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
for line in child.stdout:
    print(f"{time.monotonic() - start:7.2f} {line.rstrip()}")
print(f"{time.monotonic() - start:7.2f} exit {child.wait()}")' "$@"
}

# Where the sampled preset's nsys time goes (issue 36: capture 11.3 s against 3.6 s bare): nsys's own lines
# timestamped (its start-up before the workload, the workload, the report's generation), the export, with and
# without sampling, and with the export done by nsys profile itself (--export=sqlite).
phase_nsystime() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  bare 1b "$ex" --preset 1b --warmup 1
  bare 1b "$ex" --preset 1b --warmup 1
  local base=(--sample=none --cpuctxsw=none --wait=primary --capture-range=nvtx --nvtx-capture=decode
              --capture-range-end=stop --env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0 --force-overwrite=true)
  local sampling=(--gpu-metrics-devices=all --gpu-metrics-frequency=20000)
  for variant in ${NSYSTIME_VARIANTS:-sampled unsampled sampled-inline}; do
    local extra=() trace=(--trace=cuda,nvtx)
    case $variant in
      sampled) extra=("${sampling[@]}") ;;
      sampled-inline) extra=("${sampling[@]}" --export=sqlite) ;;
      nvtx-sampled) extra=("${sampling[@]}"); trace=(--trace=nvtx) ;;
    esac
    step "nsys profile $variant"
    stamp "$NSYS" profile "${base[@]}" "${trace[@]}" "${extra[@]}" -o "/tmp/nsystime-$variant" "$ex" --preset 1b --warmup 1 |
      grep -viE "^ *[0-9.]+ +(step|token) " | tail -25
    if [ "$variant" != sampled-inline ]; then
      stamp "$NSYS" export --type sqlite --force-overwrite=true -o "/tmp/nsystime-$variant.sqlite" \
        "/tmp/nsystime-$variant.nsys-rep" | tail -3
    fi
    ls -l /tmp/nsystime-"$variant".*
  done
}

printf 'run\texit\ttotal_s\tncu_s\tncu_status\tselection_coverage\tcoverage_reached\tplanned\trows\tpasses\tpasses_ended\testimated_s\n' \
  > "$OUT/coverage.tsv"
for phase in "$@"; do "phase_$phase" || { echo "phase $phase failed"; break; }; done
cat "$OUT/coverage.tsv"
