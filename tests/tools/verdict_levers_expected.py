#!/usr/bin/env python3
"""The verdict's levers, computed from recorded run directories with nothing of libllmprof: for each run's main
stage (ncu's selection) and each engine step kind, the step now, the GPU work per step, the HBM and compute
limits per step and each lever's gain, as tests/unit/report_verdict_test.cpp expects them
(tests/data/oracles/verdict_levers.txt).

The arithmetic, written out:
  step now         = the bare run's decode_s / new_tokens when the stage counts new_tokens steps,
                     else the step under the profiler: the timeline headroom's current step / (steps per
                     instance), else stages[].step_ns; steps are stages[].steps, else the timeline's instances
                     (for a single instance, those of the range that repeats inside it)
  GPU work / step  = timeline headroom predicted_step_ns / (steps / timeline instances)
  launch overhead  = step now / GPU work per step                      (host-bound stages with a headroom)
  HBM limit        = dram_bytes_per_step / device.peak_dram_bytes_per_s
  compute limit    = flop / steps / device.peak_flop_per_s[dominant_precision]
  kernel lever     = (GPU work per step if launch overhead applies, else step now) / the larger limit, given
                     only when both limits are known (0 FLOP measured counts as a compute limit of 0)
  straggler        = step under the profiler / (that step - the largest mean_step_start_lag_ms of analysis/ranks.csv)
"""
import csv
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNS = [
    ("after-1b", "examples/ncu-budget-h100/after-1b"),
    ("after-graphs", "examples/ncu-budget-h100/after-graphs"),
    ("serving", "examples/ncu-budget-h100/serving"),
    ("tp-h200x2", "examples/tp-run-h200x2"),
    ("sample-run", "examples/sample-run-h100"),
    ("graphs-auto", "examples/graphs-h100/cpp-graphs-auto"),
]


def figure(value):
    return "none" if value is None else repr(float(value))


def stage_figures(report, stage, ranks_csv):
    timeline = {t["name"]: t for t in (report.get("timeline") or {}).get("stages", [])}
    timed = timeline.get(stage["name"])
    count = timed["cpu_duration"]["count"] if timed else None
    steps = stage.get("steps") or count
    if not stage.get("steps") and count == 1:  # `decode` around the loop: the instances of the range inside it
        inner = [t["cpu_duration"]["count"] for t in timeline.values()
                 if t.get("parent") == stage["name"] and t["cpu_duration"]["count"] > 1]
        steps = min(inner) if inner else steps
    bare = report.get("bare_run") or {}
    step, source = None, "none"
    if bare.get("decode_s") and bare.get("new_tokens") and steps and abs(steps - bare["new_tokens"]) < 0.5:
        step, source = bare["decode_s"] / bare["new_tokens"] * 1e9, "bare"
    per_instance = steps / count if steps and count else None
    headroom = timed.get("headroom") if timed else None
    gpu_work, profiled = None, stage.get("step_ns")
    if headroom and per_instance:
        gpu_work = headroom["predicted_step_ns"] / per_instance
        profiled = headroom["current_step_ns"] / per_instance
    elif timed and timed.get("gpu_busy_fraction") is not None and steps:
        gpu_work = timed["gpu_busy_ns"] / steps
    if step is None and profiled:
        step, source = profiled, "profiled"
    launch = step / gpu_work if headroom and gpu_work and step > gpu_work else None
    base = gpu_work if launch else step
    peak_dram = report["device"].get("peak_dram_bytes_per_s")
    hbm = None
    if stage.get("dram_bytes_per_step") and (stage.get("dram_coverage") or 0) >= 0.5 and peak_dram:
        hbm = stage["dram_bytes_per_step"] / peak_dram * 1e9
    peak_flop = report["device"].get("peak_flop_per_s", {}).get(stage.get("dominant_precision") or "")
    compute = None
    if stage.get("flop") == 0 and (stage.get("flop_coverage") or 0) >= 0.5:
        compute = 0.0  # measured: no floating-point work
    elif stage.get("flop") and steps and (stage.get("flop_coverage") or 0) >= 0.5 and peak_flop:
        compute = stage["flop"] / steps / peak_flop * 1e9
    # Only the larger of the two limits bounds the step, and only when both are known.
    binding = max(hbm, compute) if hbm is not None and compute is not None else None
    hbm_gain = base / hbm if binding is not None and hbm == binding and base and base > hbm else None
    compute_gain = base / compute if binding is not None and compute == binding and base and base > compute else None
    straggler = None
    if ranks_csv.exists() and profiled:
        lags = [float(row["mean_step_start_lag_ms"]) * 1e6 for row in csv.DictReader(ranks_csv.open())]
        if len(lags) >= 2 and 0 < max(lags) < profiled:
            straggler = profiled / (profiled - max(lags))
    return (f"step_ns={figure(step)} step_source={source} gpu_work_step_ns={figure(gpu_work)} "
            f"launch_gain={figure(launch)} hbm_limit_ns={figure(hbm)} hbm_gain={figure(hbm_gain)} "
            f"compute_limit_ns={figure(compute)} compute_gain={figure(compute_gain)} straggler_gain={figure(straggler)}")


def main():
    for label, relative in RUNS:
        run = ROOT / relative
        report = json.loads((run / "analysis/report.json").read_text())
        stages = {s["name"]: s for s in report["stages"]}
        main_name = (report.get("top_kernel_selection") or {}).get("stage")
        kinds_path = run / "analysis/step_kinds.json"
        kinds = []
        if kinds_path.exists():
            for window in json.loads(kinds_path.read_text())["windows"]:
                kinds += [k["name"] for k in window["kinds"] if k["name"] not in kinds]
        for name in [main_name] + [k for k in kinds if k != main_name and k in stages]:
            role = "main" if name == main_name else "kind"
            print(f"{label} {role} {name}: " + stage_figures(report, stages[name], run / "analysis/ranks.csv"))


if __name__ == "__main__":
    main()
