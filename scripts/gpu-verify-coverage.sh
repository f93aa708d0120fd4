#!/usr/bin/env bash
# The ncu budget (90% kernel coverage by default, passes ended once their plan is met), measured MBU and the
# serving example on the GPU machine (H100, Nsight 2025.3.1), each run beside the landed code's figures.
#
# Usage (repository root on the GPU machine): scripts/gpu-verify-coverage.sh PHASE...
#   build     deep-profile from this tree (scripts/gpu-build-deep-profile.sh .carry/debs), and the example
#   before    the landed code given as .carry/base-<commit>.tar.gz (git archive of it), built the same way, run
#             with ITS defaults on BEFORE_RUNS (default "1b hf"; also "1b90" = 1b at kernel_coverage=0.9, "graphs")
#   after     this tree's defaults on AFTER_RUNS (default "1b hf graphs"; also "1b-load" = the Python twin of the 1b
#             example with 25 s of start-up, "serving" = examples/serving with --preset serving), each run named
#             after-<n>-<name> so a name may come twice
#   serving   examples/serving with --preset serving; then the same with nsys.capture_range_end=repeat:2
#   styles    examples/serving with --preset serving and defaults in each range style (STYLES, default "nested
#             flat flat-sglang none fork"): the step kinds against the workload's own counts (issue 34)
# SKIP_EXAMPLE=1 leaves the LibTorch example unbuilt (enough for `serving`).
# Every run appends a row to $OUT/coverage.tsv (ncu and total seconds, coverage with ncu data, launches, passes,
# whether passes ended the workload); run directories without reports/exports go to $OUT/<phase>-runs.tar.gz.
set -uo pipefail
OUT=${OUT:-/tmp/llmprof-out}
mkdir -p "$OUT"
repo=$PWD
export LLMPROF_CONFIG_DIR=$repo/config PYTHONUNBUFFERED=1
step() { echo; echo "=== $* ($(date -u +%T))"; }
ex=/tmp/ex/examples/decode-workload/llmprof-decode
hf=(python3 "$repo/tests/data/h100-nsight-2025.3/workload_torch_decode.py")

use_carried_libdw() {  # the bundled QdstrmImporter needs libdw.so.1, which the machine lacks
  mkdir -p /tmp/dw && for f in .carry/libdw1_*.deb .carry/libelf1_*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

build_example() {
  [ -x "$ex" ] && return 0
  [ -n "${SKIP_EXAMPLE:-}" ] && return 0  # the serving phase needs only deep-profile and PyTorch
  local torch_prefix; torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
  cmake -S "$repo" -B /tmp/ex -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMPROF_CORE=OFF -DLLMPROF_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$torch_prefix" > /tmp/ex.configure.log 2>&1 &&
    cmake --build /tmp/ex --target llmprof-decode -j16 > /tmp/ex.build.log 2>&1 || { tail -30 /tmp/ex.*.log; return 1; }
}

row() {  # $1 run directory, $2 label, $3 total seconds, $4 exit status
  python3 - "$@" >> "$OUT/coverage.tsv" <<'PY'
import json, pathlib, sys
main, label, total, rc = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def load(p):
    try: return json.loads((main / p).read_text())
    except Exception: return {}
stages = {s.get("name"): s for s in load("run.json").get("stages", [])}
plan, selection, report = load("ncu/plan.json"), load("nsys/selection.json"), load("analysis/report.json")
check = plan.get("check", {})
ended = len(check.get("workload_endings", []))
row = [label, rc, total, round(stages.get("ncu", {}).get("duration_s", 0), 1), stages.get("ncu", {}).get("status", "?"),
       selection.get("coverage", ""), check.get("coverage_reached", ""), plan.get("planned_launches", ""),
       check.get("rows", ""), len(plan.get("passes", [])), ended, plan.get("estimated_seconds", "")]
print("\t".join(str(v) for v in row))
PY
}

profile() {  # $1 binary, $2 runs root, $3 id, then deep-profile run arguments (settings, -- workload)
  local dp=$1 runs=$2 id=$3 start=$SECONDS
  shift 3
  step "$id: $dp run $*"
  "$dp" run --set run.runs_root="$runs" --set run.run_id="$id" "$@"
  local rc=$?
  echo "$id exit=$rc total=$((SECONDS - start)) s"
  row "$runs/$id" "$id" "$((SECONDS - start))" "$rc"
}

workload() {  # the workload argv of a run name
  case $1 in
    1b|1b90) echo "$ex --preset 1b --warmup 1" ;;
    1b-load) echo "python3 $repo/examples/decode-workload/decode_eager.py --preset 1b --warmup 1 --load-seconds 25" ;;
    serving) echo "python3 $repo/examples/serving/serve.py" ;;
    graphs) echo "$ex --preset 1b --warmup 1 --cuda-graphs" ;;
    hf) echo "${hf[*]}" ;;
  esac
}

pack() { (cd "$1" && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' -czf "$OUT/$2" .); }

phase_build() {
  step "build deep-profile here"
  local start=$SECONDS
  dp_new=$(scripts/gpu-build-deep-profile.sh .carry/debs "$repo" /tmp/dp-new | tail -1) || { dp_new=; return 1; }
  echo "deep-profile build: $((SECONDS - start)) s ($dp_new)"
  build_example || return 1
  use_carried_libdw
}

phase_before() {
  local tarball; tarball=$(ls .carry/base-*.tar.gz | head -1)
  step "build the landed code ($tarball)"
  rm -rf /tmp/base-src && mkdir -p /tmp/base-src && tar -xzf "$tarball" -C /tmp/base-src
  local dp_old; dp_old=$(scripts/gpu-build-deep-profile.sh .carry/debs /tmp/base-src /tmp/dp-old | tail -1) || return 1
  build_example || return 1
  use_carried_libdw
  for name in ${BEFORE_RUNS:-1b hf}; do
    local extra=(); [ "$name" = 1b90 ] && extra=(--set run.kernel_coverage=0.9)
    # shellcheck disable=SC2046
    profile "$dp_old" /tmp/runs-before "before-$name" "${extra[@]}" -- $(workload "$name")
  done
  pack /tmp/runs-before before-runs.tar.gz
}

phase_after() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  local round=0
  for name in ${AFTER_RUNS:-1b hf graphs}; do
    local extra=(); [ "$name" = serving ] && extra=(--preset serving)
    round=$((round + 1))
    # shellcheck disable=SC2046
    profile "$dp_new" /tmp/runs-after "after-$round-$name" "${extra[@]}" -- $(workload "$name")
  done
  # Trimmed exports of the 1b runs (their ANALYSIS_DETAILS kept) for the ncu plan's start-up tests.
  mkdir -p "$OUT/fixtures"
  for export in /tmp/runs-after/after-*/nsys/profile.sqlite; do
    [ -f "$export" ] || continue
    local id; id=$(basename "$(dirname "$(dirname "$export")")")
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "$export" "$OUT/fixtures/$id.sqlite" && ls -l "$OUT/fixtures/$id.sqlite"
  done
  pack /tmp/runs-after after-runs.tar.gz
}

phase_serving() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  mkdir -p /tmp/runs-serving
  step "serving example bare (its own step counts)"
  /usr/bin/time -f "serving bare wall %e s" python3 "$repo/examples/serving/serve.py" --counts /tmp/runs-serving/bare-counts.json
  profile "$dp_new" /tmp/runs-serving serving --preset serving -- \
    python3 "$repo/examples/serving/serve.py" --counts /tmp/runs-serving/serving-counts.json
  profile "$dp_new" /tmp/runs-serving serving-repeat2 --preset serving --set nsys.capture_range_end=repeat:2 \
    --set run.enable_ncu=false -- python3 "$repo/examples/serving/serve.py" --windows 2 \
    --counts /tmp/runs-serving/repeat2-counts.json
  for id in serving serving-repeat2; do
    echo "--- $id: the workload's counts, then the report's step kinds"
    cat "/tmp/runs-serving/${id#serving-}-counts.json" 2>/dev/null || cat /tmp/runs-serving/serving-counts.json
    cat "/tmp/runs-serving/$id/analysis/step_kinds.md" 2>/dev/null | head -40
    grep -o -- '--profile-from-start[= ][a-z]*' "/tmp/runs-serving/$id/ncu/cmd.txt" 2>/dev/null | head -2
  done
  # Trimmed window exports (no environment, no process names) for the step-kind fixtures in tests/data/serving/.
  mkdir -p "$OUT/fixtures"
  find /tmp/runs-serving -name '*.sqlite' -path '*/nsys/*' | while read -r export; do
    local name; name=$(echo "${export#/tmp/runs-serving/}" | tr '/' '_')
    python3 "$repo/tests/tools/trim_nsys_sqlite.py" "$export" "$OUT/fixtures/$name" && ls -l "$OUT/fixtures/$name"
  done
  pack /tmp/runs-serving serving-runs.tar.gz
}

phase_styles() {
  [ -n "${dp_new:-}" ] || phase_build || return 1
  mkdir -p /tmp/runs-styles
  for style in ${STYLES:-nested flat flat-sglang none fork}; do
    local args=()
    case $style in
      nested) ;;
      flat) args=(--ranges flat) ;;
      flat-sglang) args=(--ranges flat --kind-names sglang) ;;
      none) args=(--ranges none) ;;
      fork) args=(--start-method fork) ;;
    esac
    profile "$dp_new" /tmp/runs-styles "$style" --preset serving -- \
      python3 "$repo/examples/serving/serve.py" "${args[@]}" --counts "/tmp/runs-styles/$style-counts.json"
    echo "--- $style: the workload's counts, then the run's choice and step kinds"
    cat "/tmp/runs-styles/$style-counts.json"
    grep -h "run.stage = auto\|no step kind" "/tmp/runs-styles/$style/deep-profile.log" | head -3
    head -30 "/tmp/runs-styles/$style/analysis/step_kinds.md" 2>/dev/null
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print([(s['name'], s['status'], round(s.get('duration_s',0),1), s.get('reason','')[:160]) for s in r['stages']])" "/tmp/runs-styles/$style/run.json"
  done
  mkdir -p "$OUT/fixtures"
  for style in flat flat-sglang none; do
    [ -f "/tmp/runs-styles/$style/nsys/profile.sqlite" ] &&
      python3 "$repo/tests/tools/trim_nsys_sqlite.py" "/tmp/runs-styles/$style/nsys/profile.sqlite" \
        "$OUT/fixtures/serving_${style//-/_}_h100.sqlite" && cp "/tmp/runs-styles/$style-counts.json" "$OUT/fixtures/"
  done
  pack /tmp/runs-styles styles-runs.tar.gz
}

# Sourced (scripts/gpu-verify-sampling.sh), this file only defines its functions.
[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0
exec > >(tee -a "$OUT/verify-coverage.log") 2>&1
printf 'run\texit\ttotal_s\tncu_s\tncu_status\tselection_coverage\tcoverage_reached\tplanned\trows\tpasses\tpasses_ended\testimated_s\n' \
  > "$OUT/coverage.tsv"
for phase in "$@"; do "phase_$phase" || { echo "phase $phase failed"; break; }; done
cat "$OUT/coverage.tsv"
