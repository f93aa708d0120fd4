#!/usr/bin/env python3
"""Independent expected figures for the coverage rule of tests/unit/kernel_selection_test.cpp.

Reads nsys's nvtx_kern_sum / cuda_gpu_kern_sum with Python's csv module (no code shared with
libllmprof) and prints, for a coverage target and a cap on distinct kernels, how many kernels the rule
selects, the coverage reached, and how many more kernels 80/90/95/99% would take. Collective kernels
(names starting "nccl") are counted in the stage's time but never selected. Run from the repository root:
    python3 tests/tools/selection_expected.py
"""
import collections
import csv
import pathlib

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
STEPS = (0.8, 0.9, 0.95, 0.99)


def rows(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==") and l.strip() != "ok"]
    return list(csv.DictReader(lines))


def stage_kernels(path, stage):
    totals = collections.defaultdict(int)
    for r in rows(path):
        if r["NVTX Range"] and r["NVTX Range"].split(":", 1)[-1] == stage:
            totals[r["Kernel Name"]] += int(r["Total Time (ns)"])
    return totals


def whole_capture(path):
    totals = collections.defaultdict(int)
    for r in rows(path):
        totals[r["Name"]] += int(r["Total Time (ns)"])
    return totals


def needed(times, total, target):
    reached = 0
    for i, t in enumerate(times):
        reached += t
        if reached >= target * total * (1 - 1e-12):
            return i + 1
    return None


def report(label, totals, target, cap):
    ordered = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
    total = sum(t for _, t in ordered)
    profilable = [t for name, t in ordered if not name.startswith("nccl")]
    collective = total - sum(profilable)
    need = needed(profilable, total, target) if target else None
    count = need if need is not None and need <= cap else min(cap, len(profilable))
    coverage = sum(profilable[:count]) / total
    steps = []
    for step in STEPS:
        if step <= coverage + 1e-12:
            continue
        n = needed(profilable, total, step)
        steps.append(f"{step}:" + (f"+{n - count}" if n is not None else "unreachable"))
    print(f"{label} target={target} cap={cap}: stage_time={total} distinct={len(ordered)} selected={count} "
          f"coverage={coverage:.6f} collective_share={collective / total:.6f} steps {' '.join(steps)}")


ns1 = stage_kernels(DATA / "h100-nsight-2025.3/nsys/ns1_st_nvtx_kern_sum.csv", "decode")
report("ns1 decode", ns1, 0.9, 30)
report("ns1 decode", ns1, 0.9, 3)
report("ns1 decode top5", ns1, None, 5)
b1 = whole_capture(DATA / "h100-1b-decode/nsys/summary_cuda_gpu_kern_sum.csv")
report("1b decode (gated capture)", b1, 0.9, 30)
report("1b decode top10", b1, None, 10)
# The synthetic stage of the test "collectives are left out": times in ns.
synthetic = {"gemm_a": 500, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096>)": 300,
             "layer_norm": 100, "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)": 60, "copy": 40}
report("synthetic", synthetic, 0.9, 30)
report("synthetic", synthetic, 0.5, 30)
