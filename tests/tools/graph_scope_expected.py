#!/usr/bin/env python3
"""Expected figures of the report's capture-scope sentences, computed from a run's analysis/report.json
alone (no code shared with libllmprof): for the kernel table's stage (the ncu selection's stage, else
the outermost stage with the most recorded GPU time), the share of its recorded GPU time outside CUDA
graphs, the share inside, the number of graph executions and the lost graph launches. Prints the texts
report.md must contain, one per line (split at "; ", which CMake lists cannot hold), for
tests/tools/recorded_report.cmake:
    python3 tests/tools/graph_scope_expected.py RUN_DIRECTORY
"""
import json
import pathlib
import sys


def percent(fraction):
    """A share as report.md prints it: "< 0.1%" below a tenth of a percent, more digits near 100%."""
    value = fraction * 100
    if value == 0:
        return "0%"
    if value < 0.1:
        text = "< 0.1%"
    elif value < 1:
        text = f"{value:.2f}%"
    elif value < 10:
        text = f"{value:.1f}%"
    else:
        text = f"{value:.0f}%"
    digits = 1
    while fraction < 1 and text.startswith("100") and digits <= 4:
        text = f"{value:.{digits}f}%"
        digits += 1
    return text


def emit(text):
    for part in text.split("; "):
        print(part)


def main():
    run = pathlib.Path(sys.argv[1])
    report = json.loads((run / "analysis" / "report.json").read_text())
    timeline = report["timeline"]
    stages = [s for s in timeline["stages"] if s["gpu_time_ns"] > 0 or s["partial"]]
    selection = (report.get("top_kernel_selection") or {}).get("stage")
    chosen = [s for s in stages if s["name"] == selection]
    stage = chosen[0] if chosen else min(stages, key=lambda s: (s["level"], -s["gpu_time_ns"]))
    outside = (stage["gpu_time_ns"] - stage["graph_time_ns"]) / stage["gpu_time_ns"]
    name = f"`{stage['name']}`'s recorded GPU time"
    if timeline["graph_trace"] == "graph":
        share = percent(outside)
        share = "less than " + share[2:] if share.startswith("< ") else "the " + share
        emit(f"are {share} of {name} that ran outside CUDA graphs; {percent(1 - outside)} ran inside "
              f"{stage['graph_executions']} CUDA graph executions whose kernels this capture does not list")
        lost = stage["capture_loss"]["graph_launches_without_record"]
        if lost:
            print(f"{lost} more of its {stage['capture_loss']['graph_launches']} graph launches have no GPU record")
        if report.get("kernels"):
            print("Share of listed kernel time")
        if chosen:
            print(f"(the kernels the capture lists, which are {percent(outside)} of its recorded GPU time")
    elif timeline["graph_trace"] == "node":
        print(f"kernels inside CUDA graphs are listed, and {percent(1 - outside)} of {name} ran as graph nodes")


if __name__ == "__main__":
    main()
