#!/usr/bin/env bash
# The zoo of workloads nobody here designed a feature around (tests/zoo/), on the GPU machine.
#
# Usage (repository root on the GPU machine): scripts/gpu-zoo.sh PHASE...
#   record    each zoo workload under nsys 2025.3.1 alone (no deep-profile): the SQLite export trimmed with
#             tests/tools/trim_nsys_sqlite.py and the workload's facts JSON, into $OUT/zoo-exports.tar.gz, for
#             the recorded fixtures and their oracles
#   recordwindow  whole-run captures of workloads with a window of their own, beside their window-gated ones
#   pipeline  deep-profile (built from this tree by scripts/gpu-build-deep-profile.sh .carry/debs) on each zoo
#             workload with the defaults and with --preset serving (ZOO_RUNS names a subset); a row per run in
#             $OUT/zoo.tsv and the run directories without raw reports in $OUT/zoo-runs.tar.gz
# Needs .carry/libdw1_*.deb and .carry/libelf1_*.deb (the bundled QdstrmImporter cannot load libdw.so.1 there).
set -uo pipefail
OUT=${OUT:-/tmp/llmprof-out}
mkdir -p "$OUT"
repo=$PWD
export PYTHONUNBUFFERED=1 LLMPROF_CONFIG_DIR=$repo/config
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
work=/tmp/zoo
mkdir -p "$work"
step() { echo; echo "=== $* ($(date -u +%T))"; }

use_carried_libdw() {
  mkdir -p /tmp/dw && for f in .carry/libdw1_*.deb .carry/libelf1_*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# $1 name, $2 nsys options (one word each, space separated), then the workload argv (run in $work/$1).
capture() {
  local name=$1 options=$2 start=$SECONDS
  shift 2
  step "record $name: $*"
  mkdir -p "$work/$name" && cd "$work/$name" || return
  # shellcheck disable=SC2086
  local trace="-t cuda,nvtx"; case " $options " in *" -t "*) trace="" ;; esac
  timeout 150 "$nsys" profile $trace $options -o "$name" --force-overwrite true "$@" > profile.log 2>&1
  echo "$name: nsys exit $? in $((SECONDS - start)) s"; tail -5 profile.log
  "$nsys" export --type sqlite -o "$name.full.sqlite" --force-overwrite true "$name.nsys-rep" > export.log 2>&1 ||
    tail -5 export.log
  python3 "$repo/tests/tools/trim_nsys_sqlite.py" "$name.full.sqlite" "$name.sqlite" ${TRIM_ARGS:-} &&
    ls -la "$name.sqlite"
  cp -f ./*facts*.json "$name.facts.json" 2> /dev/null
  cd "$repo" || exit 1
}

# A graph decode whose step ranges close before their work runs (no per-step synchronisation), sampled without
# CUDA trace: the samples of a step's work fall after its range.
record_async_sampled() {
  TRIM_ARGS="--from decode:0 --read-metrics-only --samples-after-ranges 25" capture many_steps_graph_async_sampled \
    "--gpu-metrics-devices=all --gpu-metrics-frequency=20000 -t nvtx" \
    python3 "$repo/tests/zoo/many_steps.py" --graphs --step-ranges --async-steps
}

record() {
  use_carried_libdw
  local zoo=$repo/tests/zoo window="--capture-range=cudaProfilerApi --capture-range-end=stop"
  local serving="$window --trace-fork-before-exec=true --cuda-graph-trace=node"
  capture hf_dynamic_window "$window" python3 "$zoo/hf_generate.py" --window --new-tokens 16
  capture hf_static_window "$window" python3 "$zoo/hf_generate.py" --window --cache static --new-tokens 16
  capture hf_dynamic_whole "" python3 "$zoo/hf_generate.py" --new-tokens 8 --layers 2
  capture engine_graph_fork_none "$serving" python3 "$zoo/engine.py" --graphs --start-method fork --nvtx none
  capture engine_graph_fork_none_graphtrace "$window --trace-fork-before-exec=true" \
    python3 "$zoo/engine.py" --graphs --start-method fork --nvtx none
  capture engine_eager_spawn_none "$serving" python3 "$zoo/engine.py" --start-method spawn --nvtx none
  capture engine_graph_spawn_vllm "$serving" python3 "$zoo/engine.py" --graphs --start-method spawn --nvtx vllm
  capture many_steps_graph_ranges "--cuda-graph-trace=node" python3 "$zoo/many_steps.py" --graphs --step-ranges
  capture many_steps_graph_noranges "--cuda-graph-trace=node" python3 "$zoo/many_steps.py" --graphs --steps 32
  capture many_steps_eager_noranges "" python3 "$zoo/many_steps.py" --steps 16
  TRIM_ARGS=--read-metrics-only capture many_steps_graph_sampled \
    "--gpu-metrics-devices=all --gpu-metrics-frequency=20000 -t nvtx" python3 "$zoo/many_steps.py" --graphs --step-ranges
  record_async_sampled
  (cd "$work" && tar -czf "$OUT/zoo-exports.tar.gz" --exclude='*.full.sqlite' ./*/*.sqlite ./*/*.facts.json ./*/profile.log)
  ls -la "$OUT"
}

# Whole-run captures (no capture range) of workloads that open their own cudaProfilerStart/Stop window, beside the
# window-gated capture of the same workload: the window restricted out of the whole run against nsys's own window.
# Full exports come back xz-compressed ($OUT/whole-window.tar), for the restriction's tests and fixtures.
recordwindow() {
  use_carried_libdw
  local zoo=$repo/tests/zoo window="--capture-range=cudaProfilerApi --capture-range-end=stop"
  capture hf_small_whole_window "" python3 "$zoo/hf_generate.py" --window --new-tokens 8 --layers 2
  capture hf_small_window "$window" python3 "$zoo/hf_generate.py" --window --new-tokens 8 --layers 2
  capture engine_eager_spawn_whole_window "" python3 "$zoo/engine.py" --start-method spawn --nvtx none --steps 16
  capture engine_eager_spawn_small_window "$window" python3 "$zoo/engine.py" --start-method spawn --nvtx none \
    --steps 16
  (cd "$work" && for f in ./*/*.full.sqlite; do xz -T4 -6 -k "$f"; done &&
    tar -cf "$OUT/whole-window.tar" ./*/*.full.sqlite.xz ./*/*.facts.json ./*/profile.log)
  ls -la "$OUT"
}

# One zoo run through deep-profile: $1 id, then deep-profile run arguments. A row in $OUT/zoo.tsv: exit status,
# seconds, each stage's seconds and status, the capture scope and the report's headline.
profile() {
  local id=$1 start=$SECONDS
  shift
  # A run named twice in ZOO_RUNS (the second of two in a row, in the same runs root: its ncu estimate uses the cost
  # the first one measured) gets its own id.
  local n=2 base=$id
  while [ -e "/tmp/zoo-runs/$id" ]; do id=$base-$n; n=$((n + 1)); done
  step "pipeline $id: deep-profile run $*"
  rm -f engine_facts.json hf_generate_facts.json  # what the workload writes about itself, for the live step check
  timeout "${ZOO_RUN_TIMEOUT:-240}" "$dp" run --set run.runs_root=/tmp/zoo-runs --set run.run_id="$id" "$@" \
    > "/tmp/zoo-runs-$id.log" 2>&1
  local rc=$?
  echo "$id exit=$rc total=$((SECONDS - start)) s"; tail -4 "/tmp/zoo-runs-$id.log"
  # What the run left behind (listed, never signalled here): the pass end must leave no zoo process running.
  echo "$id left running: $(pgrep -af "$repo/tests/zoo/" | tr '\n' ';')"
  # The run's inferred steps against the workload's own count, over the run's own export ($OUT/zoo-steps.txt).
  local facts shape
  for facts in engine_facts.json hf_generate_facts.json; do
    [ -f "$facts" ] || continue
    shape=engine; [ "$facts" = hf_generate_facts.json ] && shape=hf
    python3 scripts/zoo_live_steps.py "/tmp/zoo-runs/$id" "$facts" "$shape" >> "$OUT/zoo-steps.txt" 2>&1 ||
      echo "$id: no live step check (see above)" >> "$OUT/zoo-steps.txt"
  done
  python3 - "/tmp/zoo-runs/$id" "$id" "$rc" "$((SECONDS - start))" >> "$OUT/zoo.tsv" <<'PY'
import json, pathlib, sys
main, label, rc, total = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def load(p):
    try: return json.loads((main / p).read_text())
    except Exception: return {}
stages = " ".join(f"{s.get('name')}={s.get('status')}:{round(s.get('duration_s', 0), 1)}"
                  for s in load("run.json").get("stages", []))
report = (main / "report.md").read_text() if (main / "report.md").exists() else ""
headline = next((line for line in report.splitlines() if line.startswith("**")), "")[:300]
print("\t".join([label, rc, total, stages, headline]))
PY
}

pipeline() {
  use_carried_libdw
  dp=${DEEP_PROFILE:-$repo/.carry/deep-profile}
  mkdir -p /tmp/zoo-runs
  local zoo=$repo/tests/zoo
  for run in ${ZOO_RUNS:-hf engine-fork-queue many-steps hf-serving engine-spawn-socket engine-fork-join hf-static}; do
    case $run in
      hf) profile hf -- python3 "$zoo/hf_generate.py" --window --new-tokens 16 ;;
      # The window captured again under nsys (the way before the discovery capture was restricted to it).
      hf-capture) profile hf-capture --set nsys.restrict_discovery_to_window=false -- python3 "$zoo/hf_generate.py" \
        --window --new-tokens 16 ;;
      hf-static) profile hf-static -- python3 "$zoo/hf_generate.py" --window --cache static --new-tokens 16 ;;
      hf-serving) profile hf-serving --preset serving -- python3 "$zoo/hf_generate.py" --window --new-tokens 16 ;;
      # The worker serves on for 10 s after its window before it answers the front, so a pass end that did not
      # end the whole tree shows as a pass that outlives its plan by that long (or hangs, as fronts that wait
      # without a timeout did under ncu 2025.3.1 before the pass end owned the tree).
      engine-fork-queue) profile engine-fork-queue -- python3 "$zoo/engine.py" --graphs --start-method fork \
        --front queue --serve-seconds 10 ;;
      engine-spawn-socket) profile engine-spawn-socket --preset serving -- python3 "$zoo/engine.py" \
        --start-method spawn --front socket --serve-seconds 10 ;;
      engine-fork-join) profile engine-fork-join --preset serving -- python3 "$zoo/engine.py" --graphs \
        --start-method fork --front join --serve-seconds 10 ;;
      # vLLM's names (decode_batch, mixed_batch), none of them the default gate `decode`: the serving preset's.
      engine-spawn-pipe) profile engine-spawn-pipe --preset serving -- python3 "$zoo/engine.py" --graphs --nvtx vllm \
        --start-method spawn --front pipe --serve-seconds 10 ;;
      engine-fork-ignore-term) profile engine-fork-ignore-term --preset serving -- python3 "$zoo/engine.py" \
        --nvtx sglang --start-method fork --front ignore-term --serve-seconds 10 ;;
      many-steps) profile many-steps -- python3 "$zoo/many_steps.py" --graphs --step-ranges ;;
      *) echo "gpu-zoo.sh: unknown run '$run'" >&2 ;;
    esac
    # After each run, so that a call stopped at its limit still brings back the runs that finished.
    (cd /tmp/zoo-runs && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
      -czf "$OUT/zoo-runs.tar.gz" . /tmp/zoo-runs-*.log 2> /dev/null)
  done
}

for phase in "$@"; do
  case $phase in
    record) record ;;
    record-async-sampled) use_carried_libdw; record_async_sampled
      (cd "$work" && tar -czf "$OUT/zoo-async.tar.gz" --exclude='*.full.sqlite' ./*/*.sqlite ./*/*.facts.json) ;;
    recordwindow) recordwindow ;;
    pipeline) pipeline ;;
    *) echo "gpu-zoo.sh: unknown phase '$phase' (record, recordwindow, pipeline)" >&2; exit 2 ;;
  esac
done
