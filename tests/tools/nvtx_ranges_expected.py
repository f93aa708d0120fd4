#!/usr/bin/env python3
"""Independent expected figures for report.json's nvtx_ranges (tests/unit/analysis_test.cpp).

Reads nsys nvtx_sum tables with Python's csv module only (no code shared with libllmprof) and prints, per range the
analysis keeps, its figures in the order report.json lists them (total time, most first), then each range left out
and why. nvtx_sum prints integer totals and rounds Avg and Med to 0.1 ns, so a row is left out only past that
rounding (1 ns, and 0.1 ns per instance for the total): no instances; the median, then the mean, outside [min, max];
total != mean x instances. (A table with min > max is refused whole by the nsys stats reader, so it has no row
here.) Run from the repository root:
    python3 tests/tools/nvtx_ranges_expected.py
"""
import csv
import pathlib

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
TABLES = [("h100-1b-decode", DATA / "h100-1b-decode" / "nsys" / "summary_nvtx_sum.csv"),
          ("contradictions", DATA / "analysis" / "nvtx-contradictions" / "summary_nvtx_sum.csv")]


def why_left_out(row):
    count, low, high = int(row["Instances"]), int(row["Min (ns)"]), int(row["Max (ns)"])
    median, mean, total = float(row["Med (ns)"]), float(row["Avg (ns)"]), int(row["Total Time (ns)"])
    if count <= 0:
        return "no instances"
    if not low - 1 <= median <= high + 1:
        return "median outside [min, max]"
    if not low - 1 <= mean <= high + 1:
        return "mean outside [min, max]"
    if abs(mean * count - total) > 0.1 * count + 1:
        return "total != mean x instances"
    return None


for label, path in TABLES:
    with open(path, newline="") as table:
        rows = list(csv.DictReader(table))
    kept = [r for r in rows if why_left_out(r) is None]
    kept.sort(key=lambda r: -int(r["Total Time (ns)"]))  # stable, as the analysis sorts
    print(f"{label}: kept={len(kept)} left_out={len(rows) - len(kept)}")
    for order, r in enumerate(kept):
        domain, name = r["Range"].split(":", 1)
        print(f"{label} range {r['Range']} order={order} name={name} domain={domain or '-'} style={r['Style']} "
              f"instances={r['Instances']} total_ns={r['Total Time (ns)']} mean_ns={r['Avg (ns)']} "
              f"p50_ns={r['Med (ns)']} min_ns={r['Min (ns)']} max_ns={r['Max (ns)']} stddev_ns={r['StdDev (ns)']}")
    for r in rows:
        if why_left_out(r) is not None:
            print(f"{label} left out {r['Range']}: {why_left_out(r)}")
