#!/usr/bin/env python3
"""Derives what `ncu --import R --page raw --csv` would print for ncu.set = "llmprof" from a recorded
`--set roofline` raw page of the same launches: the launch columns (ID ... CC) and the columns of the metrics
config/ncu-sections/LlmprofRoofline.section names, in the recorded order, every other column dropped. Nothing is
computed or edited: each kept cell is the recorded one, the units row included. It stands in for a real llmprof-set
export until the GPU records one (the two sets collect these metrics under the same names, so the values a real
export holds differ only by run-to-run variation). Usage, from the repository root:
    python3 tests/tools/derive_llmprof_csv.py tests/data/h100-nsight-2025.3/ncu/gemm_raw.csv \
        tests/data/ncu-llmprof-set/gemm_raw.csv
"""
import csv
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SECTION = ROOT / "config" / "ncu-sections" / "LlmprofRoofline.section"
LAUNCH_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
                  "Grid Size", "Device", "CC", "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
                  "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"}


def section_metrics():
    return re.findall(r'^\s*Name:\s*"([^"]+)"', SECTION.read_text(), re.MULTILINE)


def main(source, target):
    metrics = section_metrics()
    with open(source, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    missing = [m for m in metrics if m not in header]
    if missing:
        sys.exit(f"{source} lacks {len(missing)} of the section's metrics: {', '.join(missing)}")
    keep = [i for i, name in enumerate(header) if name in LAUNCH_COLUMNS or name in metrics]
    with open(target, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for row in rows:
            writer.writerow([row[i] for i in keep])
    print(f"{target}: {len(rows) - 2} launches, {len(keep)} of {len(header)} columns "
          f"({len(metrics)} metrics of the section)")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
