#!/usr/bin/env bash
# Proves libllmprof on a real GPU machine (H100, Nsight Systems/Compute 2025.3.1): builds the example
# there, runs the bare benchmarks and the real deep-profile pipeline, and leaves small results in $OUT.
#
# Usage (from the repository root on the GPU machine):  scripts/gpu-verify.sh PHASE...
#   bench    example build, probe, bare decode benchmarks C++ vs Python eager (batch 1 and 8)
#   profile  deep-profile run (gated on decode, top-10), and with a gate that never opens
#   overhead NVTX on vs compiled out, interleaved runs
#   naive    ncu --set roofline over every decode kernel, stopped after 180 s (the comparison figure)
#   sweep    deep-profile sweep over batch 1/4/16 with the quick preset
#   timeline probe, then deep-profile on CUDA-graph and eager decode (Python fixture workload and
#            llmprof-decode --cuda-graphs), graph vs node tracing, compare, and the timeline engine's
#            analysis time against nsys stats on the same report
#   graphs   bare 1b decode, eager vs --cuda-graphs (batch 1 and 8, 3 interleaved runs each), same tokens
#   repeats  issue 14's noise gate: two identical bare runs with run.repeats=5 (compare: no regression, exit 0)
#            and a deliberately slowed one (25% more decode steps; compare: regression, exit 5), gpu_state.json around stages
#   multigpu issue 16, on two GPUs: the example with NCCL; 1 vs 2 GPU bare tokens/s and tokens (batch 1, 8);
#            deep-profile run --launcher torchrun gated on decode (nsys on both ranks, ncu on rank 0);
#            the same with rank 1 sleeping MULTIGPU_STRAGGLER_MS (default 5) before each step, nsys only
#   nodepass issue 12: deep-profile run with default settings on the CUDA-graph decodes (Python fixture workload,
#            llmprof-decode --cuda-graphs): the automatic node-traced second capture feeds selection and ncu;
#            the eager Python decode takes none; runs packed into $OUT/nodepass-runs.tar.gz
#   ncukey   what ncu's --filter-mode per-launch-config counts as one configuration: nsys's nvjet launch configs of
#            the eager 1b decode beside what ncu profiled at --launch-count 1 (LaunchStats only), $OUT/ncukey.tar.gz
#   ncufilter why a mixed per-launch-config pass misses nvjet configurations: the plan's first pass in
#            variants (reordered, nvjet plus one kernel, global mode, no replay controls), $OUT/ncufilter.tar.gz
#   ncuname  the same pass's kernels as literal mangled / demangled names and no filter at all: wall and
#            nvjet groups reached, $OUT/ncuname.tar.gz
#   ncufloor the least an ncu pass costs: the 1b decode under ncu with a filter that matches nothing, gated on
#            decode and not, beside the bare run ($OUT/ncufloor.txt)
#   speed1b  the 1b example with the defaults twice, then its --cuda-graphs decode once: stage times, estimates ($OUT/speed1b.txt, speed1b-runs.tar.gz)
#   ncustart what an ncu pass pays before it profiles: the 1b decode (8 new tokens) bare, then under ncu gated on
#            decode with a filter that matches nothing: --target-processes all / application-only / with
#            CUDA_MODULE_LOADING=LAZY ($OUT/ncustart.txt)
#   ncucost  ncu's cost per launch: duration only vs --set roofline vs only the metrics the analysis reads, on 12
#            nvjet launches; then the per-kernel plan at 90% coverage with those metrics ($OUT/ncucost.tar.gz)
#   ncurecovery  the per-kernel plan at 90% coverage (1b example) with the recovery pass, $OUT/ncurecovery-runs.tar.gz
#   ncuhfbefore  the bounded plan on the HF-style Python decode at 90% coverage (before figure), $OUT/ncuplan-hf-before.tsv
#   ncucontext the per-kernel plan on the 1b decode with a 32-token prompt and 256 new tokens (context grows 9x):
#            plan.json's duration_ratio per configuration, $OUT/ncucontext.tsv and $OUT/ncucontext-runs.tar.gz
#   launchtable the 1b decode's launch table with a 32-token prompt and LAUNCHTABLE_TOKENS (192) new tokens, nsys
#            only, as tests/tools/export_launch_table.py writes it ($OUT/launches-*.tsv.gz)
#   ncuplan  deep-profile run gated on decode at 90% kernel coverage with the per-kernel ncu plan (1b example,
#            NCUPLAN_SECOND=1 twice, then the HF-style Python decode), NCUPLAN_BOUNDED=1 adds the bounded plan (the before
#            figure): ncu stage seconds, total seconds, coverage
#            reached, planned vs profiled launches and the measured per-launch cost in $OUT/ncuplan.tsv
#   ncuend   the defaults (kernel_coverage 0.9, each ncu pass ending its workload once its plan is met) on the 1b
#            example, the HF-style Python decode and --cuda-graphs; NCUEND_BEFORE=1 adds the same three with
#            ncu.end_workload_when_planned=false: $OUT/ncuend.tsv, $OUT/ncuend-1b/ (for examples/),
#            $OUT/ncuend-runs.tar.gz
#   ncuset   ncu.set = "llmprof" (the default: only the metrics the analysis reads) against --set roofline, the rest
#            default, on the 1b example eager (llmprof twice) and --cuda-graphs: replay passes per launch, every
#            stage's time, each pass's estimate and end, and the per-stage FLOP/MFU/DRAM bytes/MBU side by side
#            (scripts/compare_ncu_sets.py, within 2%): $OUT/ncuset/, $OUT/ncuset-runs.tar.gz
#   passend  the 1b example with the defaults, the process tree under ncu every 2.5 s ($OUT/ps-forest.txt): does
#            the pass end end the workload (no "decode ... ms" from it), ncu stage seconds, $OUT/passend-1b/
#   serving  the serving-shaped example (examples/serving/serve.py: spawned engine worker, continuous batching,
#            a cudaProfilerStart/Stop window) with --preset serving, then with nsys.capture_range_end=repeat:2 and
#            two windows; the workload's own step counts beside the report's, $OUT/serving-runs.tar.gz
# Inputs it expects in .carry/: deep-profile (static release build from the dev machine) and the
# libdw1/libelf1 .deb files that the bundled QdstrmImporter needs (see docs/gpu-machine notes).
set -uo pipefail
OUT=${OUT:-/tmp/llmprof-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/verify.log") 2>&1
repo=$PWD
dp=$repo/.carry/deep-profile
export LLMPROF_CONFIG_DIR=$repo/config PYTHONUNBUFFERED=1
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
step() { echo; echo "=== $* ($(date -u +%T))"; }

build_example() {  # $1 build dir, $2 NVTX ON/OFF, then extra CMake arguments
  local dir=$1 nvtx=$2
  shift 2
  cmake -S "$repo" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMPROF_CORE=OFF -DLLMPROF_BUILD_TESTS=OFF \
    -DLLMPROF_EXAMPLE_NVTX="$nvtx" -DCMAKE_PREFIX_PATH="$torch_prefix" "$@" > "$dir.configure.log" 2>&1 &&
  cmake --build "$dir" --target llmprof-decode -j16 > "$dir.build.log" 2>&1 ||
  { tail -30 "$dir.configure.log" "$dir.build.log"; return 1; }
}

pack_runs() {  # $1 a runs root, $2 an archive under $OUT: its run directories without reports and exports
  (cd "$1" && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' -czf "$OUT/$2" .)
}

use_carried_libdw() {  # makes the bundled QdstrmImporter loadable (the machine lacks libdw.so.1)
  mkdir -p /tmp/dw && for f in .carry/libdw1_*.deb .carry/libelf1_*.deb; do dpkg -x "$f" /tmp/dw; done
  export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

phase_bench() {
  step "build the example"
  local start=$SECONDS
  build_example /tmp/ex ON || return 1
  echo "example build: $((SECONDS - start)) s"
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  for batch in 1 8; do
    step "bare C++ 1b bf16 batch $batch"
    "$ex" --preset 1b --batch "$batch" --warmup 2 --metrics-out "$OUT/cpp_b$batch.json" || return 1
    step "bare Python eager 1b bf16 batch $batch"
    python3 examples/decode-workload/decode_eager.py --preset 1b --batch "$batch" --warmup 2 \
      --metrics-out "$OUT/py_b$batch.json" || return 1
  done
}

phase_profile() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  step "probe as installed (the importer cannot load libdw.so.1)"
  "$dp" probe
  use_carried_libdw
  step "probe with libdw carried"
  "$dp" probe
  step "bare workload for the wall-time comparison"
  /usr/bin/time -f "bare wall %e s" "$ex" --preset 1b --warmup 1 > /dev/null
  step "deep-profile run: 1b bf16, gated on decode, top-10"
  /usr/bin/time -f "deep-profile wall %e s" "$dp" run --set run.runs_root=/tmp/runs --set run.run_id=h100-1b-decode \
    --set run.top_n_kernels=10 -- "$ex" --preset 1b --warmup 1
  echo "exit=$?"
  step "deep-profile run with a gate that never opens (nsys.nvtx_capture=range)"
  "$dp" run --set run.runs_root=/tmp/runs --set run.run_id=h100-gate-range --set nsys.nvtx_capture=range \
    --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1
  echo "exit=$?"
  (cd /tmp/runs && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
     -czf "$OUT/runs.tar.gz" .)
}

phase_naive() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  step "naive: ncu --set roofline over every decode kernel (stopped after 180 s)"
  /usr/bin/time -f "naive ncu wall %e s" timeout 180 ncu --target-processes all --nvtx --nvtx-include "decode/" \
    --set roofline -o /tmp/naive -f "$ex" --preset 1b --warmup 1 > /tmp/naive.log 2>&1
  echo "naive exit=$?; kernels profiled: $(grep -c '==PROF== Profiling' /tmp/naive.log)"
  tail -3 /tmp/naive.log
}

phase_overhead() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode ex_off=/tmp/ex-nonvtx/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  [ -x "$ex_off" ] || build_example /tmp/ex-nonvtx OFF || return 1
  step "NVTX overhead: instrumented vs compiled-out, batch 1, 256 new tokens, 6 runs each in ABBA order"
  local i
  for i in 1 2 3; do
    "$ex" --preset 1b --new-tokens 256 --warmup 2 --metrics-out "/tmp/on_a$i.json" > /dev/null
    "$ex_off" --preset 1b --new-tokens 256 --warmup 2 --metrics-out "/tmp/off_a$i.json" > /dev/null
    "$ex_off" --preset 1b --new-tokens 256 --warmup 2 --metrics-out "/tmp/off_b$i.json" > /dev/null
    "$ex" --preset 1b --new-tokens 256 --warmup 2 --metrics-out "/tmp/on_b$i.json" > /dev/null
  done
  python3 - <<'PY' | tee "$OUT/nvtx_overhead.txt"
import glob, json, statistics
on = [json.load(open(f))["tokens_per_s"] for f in sorted(glob.glob("/tmp/on_*.json"))]
off = [json.load(open(f))["tokens_per_s"] for f in sorted(glob.glob("/tmp/off_*.json"))]
print("nvtx on  tokens/s:", [round(x, 2) for x in on], "median %.2f" % statistics.median(on))
print("nvtx off tokens/s:", [round(x, 2) for x in off], "median %.2f" % statistics.median(off))
print("median difference %.2f%% (positive: NVTX build slower)" % (100 * (statistics.median(off) - statistics.median(on)) / statistics.median(off)))
PY
}

phase_sweep() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  step "sweep over batch 1/4/16 (quick preset, nsys only: tokens/s, busy fraction and workload MFU per point)"
  /usr/bin/time -f "sweep wall %e s" "$dp" sweep --preset quick --set run.runs_root=/tmp/sweep --set run.enable_ncu=false \
    --point 'workload.argv=["'"$ex"'","--preset","1b","--warmup","1","--batch","1"]' \
    --point 'workload.argv=["'"$ex"'","--preset","1b","--warmup","1","--batch","4"]' \
    --point 'workload.argv=["'"$ex"'","--preset","1b","--warmup","1","--batch","16"]'
  echo "exit=$?"
  (cd /tmp/sweep && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
     -czf "$OUT/sweep.tar.gz" .)
}

phase_graphs() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  step "bare 1b bf16 decode: eager vs CUDA graphs, interleaved (E G G E E G), 128 new tokens"
  local batch run
  for batch in 1 8; do
    for run in e1 g1 g2 e2 e3 g3; do
      local flags=""; [ "${run:0:1}" = g ] && flags=--cuda-graphs
      "$ex" --preset 1b --batch "$batch" --new-tokens 128 --warmup 2 $flags \
        --metrics-out "$OUT/graphs_b${batch}_$run.json" > "/tmp/graphs_b${batch}_$run.log" 2>&1 || { cat "/tmp/graphs_b${batch}_$run.log"; return 1; }
      grep -E "tokens/s|sequence 0" "/tmp/graphs_b${batch}_$run.log"
    done
  done
  python3 - "$OUT" <<'PY' | tee "$OUT/graphs_summary.txt"
import glob, json, statistics, sys
out = sys.argv[1]
for batch in (1, 8):
    rows = {}
    for mode in "eg":
        files = sorted(glob.glob(f"{out}/graphs_b{batch}_{mode}*.json"))
        rows[mode] = [json.load(open(f))["time_per_output_token_s"] * 1e3 for f in files]
    e, g = statistics.median(rows["e"]), statistics.median(rows["g"])
    print(f"batch {batch}: eager ms/token {[round(x, 3) for x in rows['e']]} median {e:.3f}; "
          f"graphs {[round(x, 3) for x in rows['g']]} median {g:.3f}; speed-up {e / g:.2f}x")
PY
}

phase_timeline() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode py=examples/python-graph-decode/workload_graph_decode.py
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  step "probe (Nsight 2025.3.1 as installed here, libdw carried)"
  "$dp" probe | tee "$OUT/probe-h100.txt"
  local runs=/tmp/runs common=(--set run.runs_root=/tmp/runs --set run.enable_ncu=false)
  local node='nsys.extra_args=["--cuda-graph-trace=node"]'
  step "Python decode as CUDA graphs, 64 steps (graph tracing, the default)"
  "$dp" run "${common[@]}" --set run.run_id=py-graph -- python3 "$py" graph 64; echo "exit=$?"
  step "Python decode as CUDA graphs, 64 steps (node tracing)"
  "$dp" run "${common[@]}" --set run.run_id=py-graph-node --set "$node" -- python3 "$py" graph 64; echo "exit=$?"
  step "Python decode eager, 64 steps"
  "$dp" run "${common[@]}" --set run.run_id=py-eager -- python3 "$py" eager 64; echo "exit=$?"
  step "llmprof-decode 1b eager (nsys + ncu top-5)"
  /usr/bin/time -f "wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id=cpp-eager --set run.top_n_kernels=5 \
    -- "$ex" --preset 1b --warmup 1; echo "exit=$?"
  step "llmprof-decode 1b --cuda-graphs (graph tracing)"
  "$dp" run "${common[@]}" --set run.run_id=cpp-graphs -- "$ex" --preset 1b --warmup 1 --cuda-graphs; echo "exit=$?"
  step "llmprof-decode 1b --cuda-graphs (node tracing, nsys + ncu top-5)"
  /usr/bin/time -f "wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id=cpp-graphs-node --set "$node" \
    --set run.top_n_kernels=5 -- "$ex" --preset 1b --warmup 1 --cuda-graphs; echo "exit=$?"
  step "compare eager -> graphs"
  "$dp" compare "$runs/cpp-eager" "$runs/cpp-graphs"; echo "exit=$?"
  step "analysis time: deep-profile analyze (timeline engine) vs nsys stats, same report, 3 runs each"
  local report; report=$(ls "$runs"/cpp-eager/nsys/*.nsys-rep 2>/dev/null | head -1)
  local nsys_bin; nsys_bin=$(command -v nsys || echo /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys)
  if [ -n "$report" ]; then
    local i
    for i in 1 2 3; do
      /usr/bin/time -f "analyze %e s, max RSS %M KB" "$dp" analyze "$runs/cpp-eager" > /dev/null
      /usr/bin/time -f "nsys stats %e s, max RSS %M KB" "$nsys_bin" stats --report nvtx_kern_sum,nvtx_gpu_proj_sum \
        --format csv --output /tmp/statsbench_$i --force-export=false "$report" > /dev/null
    done
  fi
  (cd "$runs" && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
     -czf "$OUT/timeline-runs.tar.gz" .)
}

phase_nodepass() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode py=examples/python-graph-decode/workload_graph_decode.py
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  local runs=/tmp/node-runs pack
  pack() { (cd "$runs" && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
     -czf "$OUT/nodepass-runs.tar.gz" .); }
  step "Python decode as CUDA graphs, 64 steps: default settings (the node-traced second capture is automatic), nsys only"
  /usr/bin/time -f "wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id=py-graph --set run.enable_ncu=false \
    -- python3 "$py" graph 64; echo "exit=$?"; pack
  step "llmprof-decode 1b --cuda-graphs: default settings, ncu top-5"
  /usr/bin/time -f "wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id=cpp-graphs --set run.top_n_kernels=5 \
    -- "$ex" --preset 1b --warmup 1 --cuda-graphs; echo "exit=$?"; pack
  step "Python decode eager, 64 steps: no graph launch, so no second capture (nsys only)"
  "$dp" run --set run.runs_root=$runs --set run.run_id=py-eager --set run.enable_ncu=false \
    -- python3 "$py" eager 64; echo "exit=$?"; pack
  ls "$runs"/*/nsys/node 2>&1 | head -20
}

phase_ncukey() {
  # What ncu 2025.3.1's --filter-mode per-launch-config counts as one launch configuration: every nvjet launch
  # configuration of the eager 1b decode from nsys's launch table (grid, block, static and dynamic shared memory,
  # in first-occurrence order) beside the launches ncu profiled with --launch-count 1 per configuration.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  local runs=/tmp/key-runs ncu_bin; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  step "nsys of the eager 1b decode (launch table)"
  "$dp" run --set run.runs_root=$runs --set run.run_id=eager --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1
  python3 - "$runs/eager/nsys/profile.sqlite" > "$OUT/ncukey-nsys.tsv" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = {r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
extra = [c for c in ("clusterX", "clusterY", "clusterZ", "sharedMemoryExecuted", "registersPerThread") if c in cols]
decode = db.execute("SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON n.textId = s.id "
                    "WHERE coalesce(n.text, s.value) = 'decode'").fetchall()
lo, hi = min(d[0] for d in decode), max(d[1] for d in decode)
query = ("SELECT s.value, k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.staticSharedMemory, "
         "k.dynamicSharedMemory" + "".join(", k." + c for c in extra) + " FROM CUPTI_ACTIVITY_KIND_KERNEL k "
         "JOIN StringIds s ON k.demangledName = s.id WHERE k.start >= ? AND k.start < ? ORDER BY k.start")
seen = {}
for row in db.execute(query, (lo, hi)):
    seen.setdefault(row, 0)
    seen[row] += 1
print("order\tcount\tkernel\tgrid\tblock\tstatic_smem\tdynamic_smem\t" + "\t".join(extra))
for order, (row, count) in enumerate(seen.items(), 1):
    if "nvjet" in row[0] or order <= 400:
        print(order, count, row[0][:90], row[1:4], row[4:7], *row[7:], sep="\t")
PY
  step "ncu: nvjet kernels in decode, per-launch-config, --launch-count 1, LaunchStats only"
  /usr/bin/time -f "ncu wall %e s" "$ncu_bin" --nvtx --nvtx-include decode/ --kernel-name regex:nvjet \
    --filter-mode per-launch-config --launch-count 1 --section LaunchStats -f -o /tmp/key \
    "$ex" --preset 1b --warmup 1 > "$OUT/ncukey-ncu.log" 2>&1; echo "exit=$?"
  "$ncu_bin" --import /tmp/key.ncu-rep --page raw --csv > "$OUT/ncukey-raw.csv" 2>&1
  grep -c "==PROF== Profiling" "$OUT/ncukey-ncu.log"
  (cd "$OUT" && tar -czf "$OUT/ncukey.tar.gz" ncukey-*) 
}

phase_ncufilter() {
  # Why a mixed per-launch-config pass misses nvjet configurations (issue 14): the first planned pass of
  # ncu-cost-2026-11-23/plan.json (19 kernels, anchored demangled-name regex), duration only, in variants that
  # each change one thing. Profiled kernel names per variant in $OUT/ncufilter.tar.gz.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  local ncu_bin; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  local pack=$OUT/ncufilter; mkdir -p "$pack"
  python3 - examples/nsight-2025-h100/ncu-cost-2026-11-23/plan.json "$pack" <<'PY'
import json, pathlib, re, sys
plan, pack = json.loads(pathlib.Path(sys.argv[1]).read_text()), pathlib.Path(sys.argv[2])
first = plan["passes"][0]["kernel_regex"]
body = first[len("regex:^(?:"):-len(")$")]
alternatives, depth, start = [], 0, 0
for i, c in enumerate(body):  # split on top-level '|' (escaped parentheses do not count)
    if c == "(" and body[i - 1] != "\\": depth += 1
    elif c == ")" and body[i - 1] != "\\": depth -= 1
    elif c == "|" and depth == 0: alternatives.append(body[start:i]); start = i + 1
alternatives.append(body[start:])
print(len(alternatives), "alternatives", file=sys.stderr)
nvjet = [a for a in alternatives if a.startswith("nvjet")]
other = [a for a in alternatives if not a.startswith("nvjet")]
wrap = lambda parts: "regex:^(?:" + "|".join(parts) + ")$"
(pack / "regex-first.txt").write_text(first)
(pack / "regex-nvjet-last.txt").write_text(wrap(other + nvjet))
(pack / "regex-nvjet-plus-one.txt").write_text(wrap(nvjet + other[:1]))
PY
  local base=(--target-processes all --nvtx --nvtx-include decode/ --metrics gpu__time_duration.sum
              --kernel-name-base demangled -f)
  local control=(--replay-mode kernel --clock-control base --cache-control all)
  filter_run() {  # $1 name, $2 regex file, then the filter flags
    local name=$1 regex; regex=$(cat "$pack/$2"); shift 2
    step "ncu filter variant: $name"
    local start=$SECONDS
    "$ncu_bin" "${base[@]}" --kernel-name "$regex" "$@" -o "/tmp/filter-$name" "$ex" --preset 1b --warmup 1 \
      > "$pack/$name.log" 2>&1
    echo "$name exit=$? wall=$((SECONDS - start)) s profiled=$(grep -c '==PROF== Profiling' "$pack/$name.log")" \
      | tee -a "$pack/summary.txt"
    grep '==PROF== Profiling "nvjet' "$pack/$name.log" | sed 's/: 0%.*//' | sort | uniq -c | tee -a "$pack/summary.txt"
  }
  local per_config=(--filter-mode per-launch-config --launch-skip 0 --launch-count 1)
  filter_run first regex-first.txt "${per_config[@]}" "${control[@]}"
  filter_run global200 regex-first.txt --filter-mode global --launch-count 200 "${control[@]}"
  filter_run nvjet-last regex-nvjet-last.txt "${per_config[@]}" "${control[@]}"
  filter_run nvjet-plus-one regex-nvjet-plus-one.txt "${per_config[@]}" "${control[@]}"
  filter_run first-no-control regex-first.txt "${per_config[@]}"
  cp "$pack/summary.txt" "$OUT/ncufilter-summary.txt"
  (cd "$OUT" && tar -czf "$OUT/ncufilter.tar.gz" ncufilter)
}

phase_ncuname() {
  # What a pass's kernel filter costs and reaches (issue 14, after ncufilter): the first planned pass's 19
  # kernels of ncu-cost-2026-11-23/plan.json as literal names (mangled, from this run's nsys export, under
  # --kernel-name-base mangled; demangled without optional groups), against no kernel filter at all.
  # Duration only, per-launch-config; walls and profiled nvjet names in $OUT/ncuname.tar.gz.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  local ncu_bin; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  local pack=$OUT/ncuname runs=/tmp/name-runs; mkdir -p "$pack"; rm -rf "$runs"
  step "nsys of the eager 1b decode (mangled names)"
  "$dp" run --set run.runs_root=$runs --set run.run_id=eager --set run.enable_ncu=false -- "$ex" --preset 1b --warmup 1 \
    > "$pack/nsys.log" 2>&1; echo "nsys exit=$?"
  python3 - examples/nsight-2025-h100/ncu-cost-2026-11-23/plan.json "$runs/eager/nsys/profile.sqlite" "$pack" <<'PY'
import json, pathlib, re, sqlite3, sys
plan, db, pack = json.loads(pathlib.Path(sys.argv[1]).read_text()), sqlite3.connect(sys.argv[2]), pathlib.Path(sys.argv[3])
kernels = plan["passes"][0]["kernels"]
names = dict(db.execute("SELECT DISTINCT d.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON "
                        "k.demangledName = d.id JOIN StringIds m ON k.mangledName = m.id"))
missing = [k for k in kernels if k not in names]
print(len(kernels), "kernels,", len(missing), "without a mangled name:", missing, file=sys.stderr)
mangled = [names[k] for k in kernels if k in names]
(pack / "regex-mangled.txt").write_text("regex:^(?:" + "|".join(re.escape(m) for m in mangled) + ")$")
(pack / "regex-literal.txt").write_text("regex:^(?:" + "|".join(re.escape(k) for k in kernels) + ")$")
(pack / "mangled-names.tsv").write_text("".join(f"{k}\t{names.get(k, '')}\n" for k in kernels))
PY
  wc -c "$pack"/regex-*.txt
  name_run() {  # $1 name, $2 regex file or "", then ncu flags
    local name=$1 file=$2; shift 2
    local filter=(); [ -n "$file" ] && filter=(--kernel-name "$(cat "$pack/$file")")
    step "ncu kernel filter: $name"
    local start=$SECONDS
    "$ncu_bin" --target-processes all --nvtx --nvtx-include decode/ --metrics gpu__time_duration.sum "${filter[@]}" "$@" \
      --filter-mode per-launch-config --launch-skip 0 -f -o "/tmp/name-$name" "$ex" --preset 1b --warmup 1 > "$pack/$name.log" 2>&1
    echo "$name exit=$? wall=$((SECONDS - start)) s profiled=$(grep -c '==PROF== Profiling' "$pack/$name.log")" | tee -a "$pack/summary.txt"
    grep '==PROF== Profiling "nvjet' "$pack/$name.log" | sed 's/: 0%.*//' | sort | uniq -c | tee -a "$pack/summary.txt"
  }
  name_run unfiltered "" --launch-count 1
  name_run mangled regex-mangled.txt --kernel-name-base mangled --launch-count 1
  name_run literal regex-literal.txt --kernel-name-base demangled --launch-count 1
  name_run mangled-count5 regex-mangled.txt --kernel-name-base mangled --launch-count 5
  cp "$pack/summary.txt" "$OUT/ncuname-summary.txt"
  (cd "$OUT" && tar -czf "$OUT/ncuname.tar.gz" ncuname)
}

phase_ncufloor() {
  # The least an ncu pass can cost on the eager 1b decode: the workload under ncu with a kernel filter that
  # matches nothing, gated on decode (--nvtx --nvtx-include decode/) and ungated, beside the bare run.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  local ncu_bin start; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  step "bare run"
  start=$SECONDS; "$ex" --preset 1b --warmup 1 > /tmp/ncufloor-bare.log 2>&1
  echo "bare exit=$? wall=$((SECONDS - start)) s" | tee -a "$OUT/ncufloor.txt"
  step "ncu, gated on decode, no kernel matches"
  start=$SECONDS
  "$ncu_bin" --nvtx --nvtx-include decode/ --kernel-name-base mangled --kernel-name 'regex:^no_such_kernel$' \
    --filter-mode per-launch-config --launch-count 1 --metrics gpu__time_duration.sum -f -o /tmp/floor-gated \
    "$ex" --preset 1b --warmup 1 > /tmp/ncufloor-gated.log 2>&1
  echo "gated exit=$? wall=$((SECONDS - start)) s" | tee -a "$OUT/ncufloor.txt"
  step "ncu, ungated, no kernel matches"
  start=$SECONDS
  "$ncu_bin" --kernel-name-base mangled --kernel-name 'regex:^no_such_kernel$' --launch-count 1 \
    --metrics gpu__time_duration.sum -f -o /tmp/floor-ungated "$ex" --preset 1b --warmup 1 > /tmp/ncufloor-ungated.log 2>&1
  echo "ungated exit=$? wall=$((SECONDS - start)) s" | tee -a "$OUT/ncufloor.txt"
  grep -h "decode .* ms" /tmp/ncufloor-*.log | tee -a "$OUT/ncufloor.txt"
}

phase_speed1b() {
  # The 1b example with the defaults, twice in a row: every stage's time, the cost summary and each pass's
  # estimate against its end ($OUT/speed1b.txt), the run directories in $OUT/speed1b-runs.tar.gz.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode runs=/tmp/runs-speed1b id
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf "$runs" && mkdir -p "$runs"
  local spec flags
  for spec in 1b-a: 1b-b: graphs-a:--cuda-graphs; do
    IFS=: read -r id flags <<< "$spec"
    step "deep-profile run with the defaults: llmprof-decode --preset 1b --warmup 1 $flags ($id)"
    /usr/bin/time -f "$id wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id="$id" \
      -- "$ex" --preset 1b --warmup 1 $flags > "/tmp/speed1b-$id.log" 2>&1
    echo "$id exit=$?"; tail -3 "/tmp/speed1b-$id.log"
  done 2>&1 | tee -a "$OUT/speed1b.txt"
  python3 scripts/compare_ncu_sets.py "$runs/1b-b" "$runs/1b-a" >> "$OUT/speed1b.txt" 2>&1
  pack_runs "$runs" speed1b-runs.tar.gz
}

phase_ncustart() {
  # What an ncu pass pays before it profiles anything, on the 1b decode cut to 8 new tokens: the bare run, then
  # ncu gated on decode with a filter that matches nothing as deep-profile launches it (--target-processes all),
  # with --target-processes application-only, and with CUDA_MODULE_LOADING=LAZY set explicitly. The workload's
  # own prefill/decode lines say how much of each wall is its work.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  local ncu_bin start id; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  local work=(--preset 1b --warmup 1 --new-tokens 8)
  local floor=(--nvtx --nvtx-include decode/ --kernel-name-base mangled --kernel-name 'regex:^no_such_kernel$'
               --filter-mode per-launch-config --launch-count 1 --section-folder "$repo/config/ncu-sections"
               --section LlmprofRoofline --replay-mode kernel --clock-control base --cache-control all -f)
  for id in bare all application-only lazy; do
    step "ncustart $id"
    start=$EPOCHREALTIME
    case $id in
      bare) "$ex" "${work[@]}" > "/tmp/ncustart-$id.log" 2>&1 ;;
      all) "$ncu_bin" --target-processes all "${floor[@]}" -o /tmp/ncustart-$id "$ex" "${work[@]}" > "/tmp/ncustart-$id.log" 2>&1 ;;
      application-only) "$ncu_bin" --target-processes application-only "${floor[@]}" -o /tmp/ncustart-$id "$ex" "${work[@]}" \
        > "/tmp/ncustart-$id.log" 2>&1 ;;
      lazy) CUDA_MODULE_LOADING=LAZY "$ncu_bin" --target-processes all "${floor[@]}" -o /tmp/ncustart-$id "$ex" "${work[@]}" \
        > "/tmp/ncustart-$id.log" 2>&1 ;;
    esac
    echo "$id exit=$? wall=$(python3 -c "print(round($EPOCHREALTIME - $start, 1))") s $(grep -h 'decode .* ms' "/tmp/ncustart-$id.log")" \
      | tee -a "$OUT/ncustart.txt"
  done
}

phase_repeats() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  local runs=/tmp/repeats-runs
  rm -rf "$runs"
  local bare=(--set run.runs_root="$runs" --set run.repeats=5 --set run.enable_nsys=false --set run.enable_ncu=false)
  for id in base-a base-b; do
    step "bare 1b batch 1, 5 repeats ($id)"
    "$dp" run "${bare[@]}" --set run.run_id="$id" -- "$ex" --preset 1b --warmup 1; echo "$id exit=$?"
  done
  step "bare 1b, 5 repeats, slowed on purpose: 25% more decode steps, 160 instead of 128 (the eager loop is launch-bound, so a larger batch would not slow it)"
  "$dp" run "${bare[@]}" --set run.run_id=slow -- "$ex" --preset 1b --warmup 1 --new-tokens 160; echo "slow exit=$?"
  step "compare identical runs (expect no regression: exit 0)"
  "$dp" compare "$runs/base-a" "$runs/base-b" --fail-if-slower 5 > "$OUT/compare-identical.md"; echo "compare identical exit=$?"
  step "compare against the slowed run (expect a regression: exit 5)"
  "$dp" compare "$runs/base-a" "$runs/slow" --fail-if-slower 5 > "$OUT/compare-slowed.md"; echo "compare slowed exit=$?"
  (cd "$runs" && tar -czf "$OUT/repeats-runs.tar.gz" .)
}

# One deep-profile run for phase_ncuplan: $1 run id, $2 ncu.plan, then the workload's argv (default: the 1b
# example); appends a row to $OUT/ncuplan.tsv.
ncuplan_run() {
  local id=$1 plan=$2 runs=/tmp/runs-ncuplan start=$SECONDS
  shift 2
  local workload=("$@")
  [ ${#workload[@]} -gt 0 ] || workload=(/tmp/ex/examples/decode-workload/llmprof-decode --preset 1b --warmup 1)
  step "deep-profile run: ${workload[*]}, gated on decode, kernel_coverage 0.9, ncu.plan=$plan"
  "$dp" run --set run.runs_root=$runs --set run.run_id="$id" --set run.kernel_coverage=0.9 --set ncu.plan="$plan" \
    "${ncuplan_settings[@]}" -- "${workload[@]}"
  local rc=$? total=$((SECONDS - start))
  echo "exit=$rc"
  python3 - "$runs/$id" "$plan" "$total" "$rc" >> "$OUT/ncuplan.tsv" <<'PY'
import json, pathlib, sys
main, plan_mode, total, rc = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
stages = {s["name"]: s for s in json.loads((main / "run.json").read_text()).get("stages", [])}
plan = json.loads((main / "ncu/plan.json").read_text()) if (main / "ncu/plan.json").exists() else {}
check = plan.get("check", {})
selection = json.loads((main / "nsys/selection.json").read_text()) if (main / "nsys/selection.json").exists() else {}
row = [main.name, plan_mode, rc, total, round(stages.get("ncu", {}).get("duration_s", 0), 1),
       stages.get("ncu", {}).get("status", "?"), selection.get("coverage", ""), plan.get("expected_coverage", ""),
       check.get("coverage_reached", ""), plan.get("planned_launches", ""), check.get("profiled_planned_launches", ""),
       check.get("rows", ""), len(plan.get("passes", [])), plan.get("estimated_seconds", ""),
       plan.get("measured_seconds_per_launch", ""), plan.get("extrapolated_time_ratio", ""),
       sum(1 for c in plan.get("configs", []) if c.get("unrepresentative")),
       len(check.get("workload_endings", []))]
print("\t".join(str(v) for v in row))
PY
}

ncuplan_settings=()

ncuplan_header() {  # starts $OUT/ncuplan.tsv with the columns ncuplan_run appends
  printf 'run\tplan\texit\ttotal_s\tncu_s\tncu_status\tselection_coverage\texpected_coverage\tcoverage_reached\tplanned\tprofiled_planned\trows\tpasses\testimated_s\tmeasured_s_per_launch\textrapolated_time_ratio\tunrepresentative\tpasses_ended_early\n' \
    > "$OUT/ncuplan.tsv"
}

phase_ncucost() {
  # ncu's cost per profiled launch by what it collects, on the same 12 nvjet launches of the eager 1b decode:
  # duration only (the baseline: the workload under ncu), --set roofline, and only the metrics the analysis
  # reads (the columns of the roofline export that roofline_metric_prefixes() keeps); then the per-kernel plan
  # at 90% coverage with those metrics. Everything is packed into $OUT/ncucost.tar.gz.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  local ncu_bin; ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  local pack=$OUT/ncucost; mkdir -p "$pack"
  local common=(--nvtx --nvtx-include decode/ --kernel-name regex:nvjet --launch-count 12 --replay-mode kernel
                --clock-control base --cache-control all -f)
  cost_run() {  # $1 name, then what to collect
    local name=$1; shift
    step "ncu, 12 nvjet launches: $name"
    local start=$SECONDS
    "$ncu_bin" "${common[@]}" "$@" -o "/tmp/cost-$name" "$ex" --preset 1b --warmup 1 > "$pack/$name.log" 2>&1
    echo "$name exit=$? wall=$((SECONDS - start)) s" | tee -a "$pack/times.txt"
    "$ncu_bin" --import "/tmp/cost-$name.ncu-rep" --page raw --csv --print-units base > "$pack/$name.csv" 2>&1
  }
  cost_run base --metrics gpu__time_duration.sum
  cost_run roofline --set roofline
  python3 - "$pack/roofline.csv" > "$pack/lean-metrics.txt" <<'PY'
import csv, sys
header = next(csv.reader(open(sys.argv[1])))
prefixes = ("gpu__time_duration", "sm__ops_path_tensor_", "sm__sass_thread_inst_executed_op_",
            "smsp__sass_thread_inst_executed_op_", "smsp__cycles_elapsed", "sm__cycles_elapsed", "dram__",
            "gpu__dram_throughput", "device__attribute_display_name")
print(",".join(sorted({h for h in header if h.startswith(prefixes)})))
PY
  cost_run lean --metrics "$(cat "$pack/lean-metrics.txt")"
  cp "$pack/times.txt" "$OUT/ncucost-times.txt"
  (cd "$OUT" && tar -czf "$OUT/ncucost.tar.gz" ncucost)
  local toml_list; toml_list=$(python3 -c 'import sys; print("[" + ",".join(chr(34) + m + chr(34) for m in sys.argv[1].split(",")) + "]")' \
    "$(cat "$pack/lean-metrics.txt")")
  ncuplan_header
  ncuplan_settings=(--set 'ncu.set=""' --set "ncu.metrics=$toml_list")
  ncuplan_run ncuplan-lean per-kernel
  cat "$OUT/ncuplan.tsv"
  pack_runs /tmp/runs-ncuplan ncuplan-runs.tar.gz
}

phase_ncurecovery() {
  # The per-kernel plan at 90% coverage with the recovery pass (one pass over the planned groups without a row).
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  ncuplan_run ncuplan-recovery per-kernel
  cat "$OUT/ncuplan.tsv"
  (cd /tmp/runs-ncuplan && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.sqlite' --exclude='*.qdstrm' \
     --exclude='*.csv' -czf "$OUT/ncurecovery-runs.tar.gz" .)
}

phase_ncuhfbefore() {
  # The before figure for the HF-style Python decode: the bounded plan at the same 90% selection.
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  ncuplan_run ncuplan-hf-bounded bounded python3 "$repo/tests/data/h100-nsight-2025.3/workload_torch_decode.py"
  cat "$OUT/ncuplan.tsv"
  cp "$OUT/ncuplan.tsv" "$OUT/ncuplan-hf-before.tsv"
  cp /tmp/runs-ncuplan/ncuplan-hf-bounded/ncu/plan.log "$OUT/hf-bounded-plan.log" 2>/dev/null
}

phase_ncuplan() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  ncuplan_run ncuplan-per-kernel per-kernel
  # NCUPLAN_SECOND=1: a second plan that estimates from the first run's measured cost
  [ "${NCUPLAN_SECOND:-0}" = 1 ] && ncuplan_run ncuplan-per-kernel-2 per-kernel
  ncuplan_run ncuplan-hf-per-kernel per-kernel python3 "$repo/tests/data/h100-nsight-2025.3/workload_torch_decode.py"
  # The bounded plan is the before figure (232 s, 70.7% with top-10 on 2026-11-23); NCUPLAN_BOUNDED=1 re-measures it.
  [ "${NCUPLAN_BOUNDED:-0}" = 1 ] && ncuplan_run ncuplan-bounded bounded
  cat "$OUT/ncuplan.tsv"
  cp /tmp/runs-ncuplan/ncuplan-per-kernel/ncu/plan.json "$OUT/plan.json" 2>/dev/null
  cp /tmp/runs-ncuplan/ncuplan-per-kernel/ncu/plan.log "$OUT/plan.log" 2>/dev/null
  pack_runs /tmp/runs-ncuplan ncuplan-runs.tar.gz
}

phase_ncuend() {
  # Each ncu pass ends its workload once its planned launches are profiled, with the defaults (kernel_coverage
  # 0.9): the 1b example (its run directory's run.json, report.json, plan.json and plan.log copied to
  # $OUT/ncuend-1b/ for examples/), the HF-style Python decode and llmprof-decode --cuda-graphs. NCUEND_BEFORE=1
  # adds the same three with ncu.end_workload_when_planned=false (the before figures, same session).
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  local hf=(python3 "$repo/tests/data/h100-nsight-2025.3/workload_torch_decode.py")
  ncuplan_settings=()
  ncuplan_run ncuend-1b per-kernel
  ncuplan_run ncuend-hf per-kernel "${hf[@]}"
  ncuplan_run ncuend-graphs per-kernel "$ex" --preset 1b --warmup 1 --cuda-graphs
  if [ "${NCUEND_BEFORE:-0}" = 1 ]; then
    ncuplan_settings=(--set ncu.end_workload_when_planned=false)
    ncuplan_run ncuend-1b-before per-kernel
    ncuplan_run ncuend-hf-before per-kernel "${hf[@]}"
    ncuplan_run ncuend-graphs-before per-kernel "$ex" --preset 1b --warmup 1 --cuda-graphs
    ncuplan_settings=()
  fi
  cat "$OUT/ncuplan.tsv"
  cp "$OUT/ncuplan.tsv" "$OUT/ncuend.tsv"
  local main=/tmp/runs-ncuplan/ncuend-1b
  mkdir -p "$OUT/ncuend-1b/analysis" "$OUT/ncuend-1b/ncu"
  cp "$main/run.json" "$OUT/ncuend-1b/" 2>/dev/null
  cp "$main/analysis/report.json" "$OUT/ncuend-1b/analysis/" 2>/dev/null
  cp "$main/ncu/plan.json" "$main/ncu/plan.log" "$main/ncu/profile.log" "$OUT/ncuend-1b/ncu/" 2>/dev/null
  pack_runs /tmp/runs-ncuplan ncuend-runs.tar.gz
}

phase_ncuset() {
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode runs=/tmp/runs-ncuset
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf "$runs" && mkdir -p "$runs" "$OUT/ncuset"
  local spec id set flags
  for spec in 1b-llmprof:llmprof: 1b-llmprof-2:llmprof: 1b-roofline:roofline: \
              graphs-llmprof:llmprof:--cuda-graphs graphs-roofline:roofline:--cuda-graphs; do
    IFS=: read -r id set flags <<< "$spec"
    step "deep-profile run, ncu.set=$set, defaults otherwise: llmprof-decode --preset 1b --warmup 1 $flags"
    /usr/bin/time -f "$id wall %e s" "$dp" run --set run.runs_root=$runs --set run.run_id="$id" --set ncu.set="$set" \
      -- "$ex" --preset 1b --warmup 1 $flags > "$OUT/ncuset/$id.log" 2>&1
    echo "$id exit=$?"; tail -12 "$OUT/ncuset/$id.log"
    cp "$runs/$id/ncu/raw.csv" "$OUT/ncuset/$id-raw.csv" 2>/dev/null
  done
  python3 scripts/compare_ncu_sets.py "$runs/1b-llmprof" "$runs/1b-roofline" | tee "$OUT/ncuset/compare-1b.txt"
  python3 scripts/compare_ncu_sets.py "$runs/graphs-llmprof" "$runs/graphs-roofline" | tee "$OUT/ncuset/compare-graphs.txt"
  python3 scripts/compare_ncu_sets.py "$runs/1b-llmprof-2" "$runs/1b-llmprof" > "$OUT/ncuset/compare-1b-twice.txt"
  ncu --section-folder config/ncu-sections --section LlmprofRoofline --list-metrics > "$OUT/ncuset/list-metrics.txt" 2>&1
  pack_runs "$runs" ncuset-runs.tar.gz
}

phase_passend() {
  # The pass end on the 1b example with the defaults (llmprof set, kernel_coverage 0.9): the tree under ncu every
  # 2.5 s, the stage times, and whether the workload printed its own end (it must not once the plan is met).
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  touch /tmp/forest.pid && scripts/process-forest.sh /tmp/forest.pid "$OUT/ps-forest.txt" &
  ncuplan_run passend-1b per-kernel 2>&1 | tee "$OUT/passend-1b.log"
  rm -f /tmp/forest.pid
  cat "$OUT/ncuplan.tsv"
  local main=/tmp/runs-ncuplan/passend-1b
  mkdir -p "$OUT/passend-1b/ncu"
  cp "$main/run.json" "$main/ncu/plan.json" "$main/ncu/plan.log" "$main/ncu/profile.log" "$main/ncu/raw.csv" \
    "$OUT/passend-1b/ncu/" 2>/dev/null
  grep -n -E 'decode .* ms|ended the workload|Connected to process' "$main/ncu/profile.log" | head -20
  pack_runs /tmp/runs-ncuplan passend-runs.tar.gz
}

phase_ncucontext() {
  # The per-kernel plan on a decode whose context grows (32-token prompt, NCUCONTEXT_TOKENS new tokens, default
  # 256): the plan profiles each configuration's first launch; plan.json's duration_ratio says which of them stop
  # standing for the stage. Then the plan's Python oracle, before and after the planner's change of 2026-11-25
  # (.carry/ncu_plan_expected_old.py, if carried), over this run's launch table: passes and expected coverage.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode tokens=${NCUCONTEXT_TOKENS:-256}
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  rm -rf /tmp/runs-ncuplan
  ncuplan_header
  local id=ncucontext-1b-p32-n$tokens
  ncuplan_run "$id" per-kernel "$ex" --preset 1b --warmup 1 --prompt-len 32 --new-tokens "$tokens"
  cat "$OUT/ncuplan.tsv"
  cp "$OUT/ncuplan.tsv" "$OUT/ncucontext.tsv"
  cat "/tmp/runs-ncuplan/$id/ncu/plan.log"
  [ -f .carry/ncu_plan_expected_old.py ] && python3 - "/tmp/runs-ncuplan/$id" <<'PY' | tee "$OUT/ncucontext-oracle.txt"
import collections, importlib.util, json, pathlib, sys
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); return module
old, new = load("old", ".carry/ncu_plan_expected_old.py"), load("new", "tests/tools/ncu_plan_expected.py")
main = pathlib.Path(sys.argv[1])
plan = json.loads((main / "ncu/plan.json").read_text())
kernels = [k["name"] for k in json.loads((main / "nsys/selection.json").read_text())["kernels"]]
launches = new.stage_launches(main / "nsys/profile.sqlite", "decode")
stage_time = sum(d for _, _, d in launches)
time = collections.Counter()
for name, config, d in launches: time[(name, config)] += d
per_pass = plan["seconds_per_pass"]
print(f"launches={len(launches)} selected={len(kernels)} seconds_per_pass={per_pass:.1f}")
for label, module, extra in (("before", old, {}), ("after", new, {"order": kernels})):
    result = module.plan(launches, set(kernels), per_pass_s=per_pass, **extra)
    passes, planned = result[0], result[1]
    covered = sum(time[g] for g in planned)
    print(f"{label}: passes={[p[:2] for p in passes]} planned_launches={sum(p[1] for p in passes)} "
          f"planned_groups={len(planned)} of {len(result[2])} expected_coverage={covered / stage_time:.4f}")
PY
  pack_runs /tmp/runs-ncuplan ncucontext-runs.tar.gz
}

phase_launchtable() {
  # The decode launch table of the 1b example with a growing context (32-token prompt, LAUNCHTABLE_TOKENS new
  # tokens, default 192), nsys only: tests/data/ncu-plan/ keeps it as the compact TSV of
  # tests/tools/export_launch_table.py (kernels, configurations, then one line per launch) for the plan's tests.
  local ex=/tmp/ex/examples/decode-workload/llmprof-decode tokens=${LAUNCHTABLE_TOKENS:-192}
  [ -x "$ex" ] || build_example /tmp/ex ON || return 1
  use_carried_libdw
  local id=table-1b-p32-n$tokens runs=/tmp/runs-table
  rm -rf "$runs"
  "$dp" run --set run.runs_root=$runs --set run.run_id=$id --set run.enable_ncu=false -- \
    "$ex" --preset 1b --warmup 1 --prompt-len 32 --new-tokens "$tokens" > "$OUT/launchtable-run.log" 2>&1
  echo "nsys run exit=$?"
  python3 "$repo/tests/tools/export_launch_table.py" "$runs/$id/nsys/profile.sqlite" decode "$OUT/launches-1b-p32-n$tokens.tsv"
  cp "$runs/$id/nsys/selection.json" "$OUT/selection-1b-p32-n$tokens.json"
  # -n: no name or time in the header, so the file is what tests/data/ncu-plan/ tracks (cmake/fixtures.cmake).
  gzip -9n "$OUT/launches-1b-p32-n$tokens.tsv"
}

multigpu_bare() {  # $1 the example, $2 the launcher words
  local ex=$1 tp=$2
  printf 'gpus\tbatch\tdtype\tdecode_tokens_per_s\tprefill_s\tdecode_s\n' > "$OUT/tp-bare.tsv"
  # Tokens are compared in fp32: in bf16 the two partial sums and their all-reduce round differently from one
  # GEMM, and greedy decoding of random weights then parts early (2026-11-23: batch 1 at step 10).
  for dtype in fp32 bf16; do
    for batch in 1 8; do
      step "bare 1b $dtype batch $batch: one GPU, then two (tensor parallel)"
      local tag="$dtype-b$batch"
      "$ex" --preset 1b --dtype "$dtype" --batch "$batch" --warmup 2 --tokens-out "$OUT/tokens-1gpu-$tag.txt" \
        --metrics-out "$OUT/bare-1gpu-$tag.json" > "$OUT/bare-1gpu-$tag.log" 2>&1 || { tail "$OUT/bare-1gpu-$tag.log"; return 1; }
      $tp "$ex" --tensor-parallel --preset 1b --dtype "$dtype" --batch "$batch" --warmup 2 \
        --tokens-out "$OUT/tokens-2gpu-$tag.txt" --metrics-out "$OUT/bare-2gpu-$tag.json" > "$OUT/bare-2gpu-$tag.log" 2>&1 ||
        { tail "$OUT/bare-2gpu-$tag.log"; return 1; }
      python3 - "$OUT/tokens-1gpu-$tag.txt" "$OUT/tokens-2gpu-$tag.txt" <<'PY'
import sys
one, two = (open(f).read().split("\n") for f in sys.argv[1:3])
parted = [next((i for i, (a, b) in enumerate(zip(x.split(), y.split())) if a != b), None) for x, y in zip(one, two) if x]
same = all(p is None for p in parted)
print(sys.argv[1].split("tokens-1gpu-")[1], "tokens identical" if same else f"TOKENS DIFFER: first differing position per sequence {parted}")
PY
      for gpus in 1 2; do
        python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print("\t".join([sys.argv[2], str(m["batch"]), m["dtype"], str(m["tokens_per_s"]), str(m["prefill_s"]), str(m["decode_s"])]))' \
          "$OUT/bare-${gpus}gpu-$tag.json" "$gpus" >> "$OUT/tp-bare.tsv"
      done
    done
  done
  cat "$OUT/tp-bare.tsv"
}

phase_multigpu() {
  # NVLink multicast stays off (KINDS.md: it can put the host's shared GPUs out of service); every rank and
  # every tool inherits these.
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  python3 -c 'import torch; print("torch", torch.__version__, "GPUs", torch.cuda.device_count())'
  nvidia-smi topo -m
  step "build the example with NCCL (pip's nccl.h)"
  local nccl_include
  nccl_include=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))')
  echo "nccl.h from $nccl_include"
  local start=$SECONDS
  build_example /tmp/extp ON -DLLMPROF_NCCL_INCLUDE_DIR="$nccl_include" || return 1
  echo "example build: $((SECONDS - start)) s"
  grep -o 'LLMPROF_DECODE_NCCL=1' /tmp/extp/build.ninja | head -1 || { echo "built without NCCL"; return 1; }
  local ex=/tmp/extp/examples/decode-workload/llmprof-decode
  use_carried_libdw
  torchrun --help > "$OUT/torchrun-help.txt" 2>&1
  local tp="torchrun --nproc-per-node 2 --no-python"
  [ "${MULTIGPU_BARE:-1}" = 1 ] && multigpu_bare "$ex" "$tp"
  rm -rf /tmp/runs-tp
  step "deep-profile run --launcher torchrun: 1b, gated on decode, nsys on both ranks, ncu on rank 0 (top 5)"
  /usr/bin/time -f "deep-profile wall %e s" "$dp" run --set run.runs_root=/tmp/runs-tp --set run.run_id=h200x2-tp-1b \
    --set run.top_n_kernels=5 --launcher "$tp" -- "$ex" --tensor-parallel --preset 1b --warmup 1
  echo "exit=$?"
  # Two short nsys-only runs (48 decode steps, so that their trimmed SQLite exports are test fixtures):
  # rank 1 sleeping MULTIGPU_STRAGGLER_MS before each step, and no straggler.
  local delay=${MULTIGPU_STRAGGLER_MS:-5}
  for run in straggler-${delay}ms no-straggler; do
    local extra=()
    [ "$run" = no-straggler ] || extra=(--straggler-ms "$delay")
    step "deep-profile run --launcher torchrun, $run (48 steps, nsys only)"
    /usr/bin/time -f "deep-profile wall %e s" "$dp" run --set run.runs_root=/tmp/runs-tp --set "run.run_id=h200x2-tp-$run" \
      --set run.enable_ncu=false --launcher "$tp" -- "$ex" --tensor-parallel --preset 1b --warmup 1 --new-tokens 48 \
      "${extra[@]}"
    echo "exit=$?"
    mkdir -p "$OUT/pack/sqlite-$run"
    for rank in 0 1; do
      python3 "$repo/tests/tools/trim_nsys_sqlite.py" "/tmp/runs-tp/h200x2-tp-$run/ranks/r$rank/nsys/profile.sqlite" \
        "$OUT/pack/sqlite-$run/r$rank.sqlite"
    done
  done
  for run in /tmp/runs-tp/*/; do
    echo "--- $run: analysis/ranks.md"; cat "$run/analysis/ranks.md" 2>/dev/null
  done
  (cd /tmp/runs-tp && tar --exclude='*.nsys-rep' --exclude='*.ncu-rep' --exclude='*.qdstrm' \
     --exclude='*.sqlite' -czf "$OUT/pack/tp-runs.tar.gz" .)
  # One archive: the machine returns a few files per call.
  mv "$OUT"/*.txt "$OUT"/*.tsv "$OUT"/*.json "$OUT"/bare-*.log "$OUT/pack/" 2>/dev/null
  (cd "$OUT/pack" && tar -czf "$OUT/multigpu.tar.gz" .) && rm -rf "$OUT/pack"
  ls -la "$OUT"
}

phase_serving() {
  use_carried_libdw
  local runs=/tmp/serving-runs serve=$repo/examples/serving/serve.py
  rm -rf "$runs" && mkdir -p "$runs"
  step "serving example bare (its own step counts per kind inside the window)"
  /usr/bin/time -f "bare wall %e s" python3 "$serve" --counts "$runs/bare-counts.json"; echo "bare exit=$?"
  step "deep-profile --preset serving (one window; ncu with --profile-from-start off)"
  /usr/bin/time -f "serving wall %e s" "$dp" run --preset serving --set run.runs_root="$runs" --set run.run_id=serving \
    -- python3 "$serve" --counts "$runs/serving-counts.json"; echo "serving exit=$?"
  grep -o -- '--profile-from-start off' "$runs/serving/ncu/cmd.txt" | head -1
  cat "$runs/serving/analysis/step_kinds.md" 2>/dev/null; cat "$runs/serving-counts.json"
  step "deep-profile --preset serving, two windows (repeat:2), nsys only"
  /usr/bin/time -f "repeat2 wall %e s" "$dp" run --preset serving --set run.runs_root="$runs" --set run.run_id=repeat2 \
    --set nsys.capture_range_end=repeat:2 --set run.enable_ncu=false \
    -- python3 "$serve" --windows 2 --counts "$runs/repeat2-counts.json"; echo "repeat2 exit=$?"
  cat "$runs/repeat2/nsys/windows.json" 2>/dev/null; cat "$runs/repeat2/analysis/step_kinds.md" 2>/dev/null
  cat "$runs/repeat2-counts.json"
  step "discovery: the serving example under the default NVTX gate (decode), run.on_empty_gate=discover, nsys only"
  "$dp" run --set run.runs_root="$runs" --set run.run_id=discover --set run.on_empty_gate=discover \
    --set run.enable_ncu=false -- python3 "$serve" --counts "$runs/discover-counts.json"; echo "discover exit=$?"
  pack_runs "$runs" serving-runs.tar.gz
}

nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
for phase in "$@"; do
  "phase_$phase" || echo "phase $phase FAILED"
done
