#!/usr/bin/env python3
"""Independent figures for the parser tests (tests/unit/{nsys_stats,ncu_metrics}_test.cpp).

Reads the fixtures with Python's csv module only (no code shared with libllmprof) and prints the row
counts, sums and values the C++ tests assert. Run: python3 tests/tools/fixture_facts.py
"""
import csv
import pathlib

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100-nsight-2025.3"


def rows(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==") and l.strip() != "ok"]
    return list(csv.DictReader(lines))


def number(text):
    return float(text.replace(",", ""))


for name in sorted((DATA / "nsys").glob("*.csv")):
    table = rows(name)
    total_key = next((k for k in ("Total Time (ns)", "Total Proj Time (ns)") if k in table[0]), None)
    total = sum(int(r[total_key]) for r in table)
    print(f"{name.name}: rows={len(table)} sum({total_key})={total}")
    if "Instances" in table[0]:
        print(f"  sum(Instances)={sum(int(r['Instances']) for r in table)}")
    if "Kern Inst" in table[0]:
        print(f"  sum(Kern Inst)={sum(int(r['Kern Inst']) for r in table)}"
              f" outside-range rows={sum(1 for r in table if r['NVTX Range'] == '')}")
    for key in ("Name", "Kernel Name"):
        if key in table[0]:
            print(f"  names with a comma={sum(1 for r in table if ',' in r[key])} first={table[0][key][:60]!r}")

for name in ("nc1_raw.csv", "nc1_raw_base.csv", "gemm_raw.csv"):
    table = rows(DATA / "ncu" / name)
    units, launches = table[0], table[1:]
    durations = [number(r["gpu__time_duration.sum"]) for r in launches]
    print(f"{name}: launches={len(launches)} columns={len(units)} duration unit={units['gpu__time_duration.sum']}"
          f" sum(duration)={sum(durations)} first kernel={launches[0]['Kernel Name'][:50]!r}")
    print(f"  dram__bytes.sum.per_second[0]={launches[0]['dram__bytes.sum.per_second']} {units['dram__bytes.sum.per_second']}"
          f"  sm__ops_path_tensor_src_bf16_dst_fp32.sum[0]={launches[0]['sm__ops_path_tensor_src_bf16_dst_fp32.sum']}")

for name in ("nc1_details.csv", "gemm_details.csv", "nc2_log.csv", "gemm_metrics_stdout.csv"):
    table = rows(DATA / "ncu" / name)
    ids = []
    for r in table:
        if r["ID"] not in ids:
            ids.append(r["ID"])
    metric_rows = [r for r in table if r["Metric Name"]]
    per_launch = {}
    for r in metric_rows:
        per_launch.setdefault(r["ID"], set()).add(r["Metric Name"])
    durations = [r for r in metric_rows if r["Metric Name"] in ("Duration", "gpu__time_duration.sum")]
    print(f"{name}: launches={len(ids)} metric rows={len(metric_rows)} rule rows={len(table) - len(metric_rows)}"
          f" metrics of launch 0={len(per_launch[ids[0]])}"
          f" first duration={durations[0]['Metric Value']} {durations[0]['Metric Unit']}")
