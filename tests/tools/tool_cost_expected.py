#!/usr/bin/env python3
"""Independent expected figures for the cost of profiling as multiples of the bare run (llmprof/tool_cost.hpp),
over recorded run.json files, with json alone (no code shared with libllmprof). The run took the sum of its
stages' times; the bare run is stage1 (succeeded, > 0 s); nsys and ncu count when their stage ran (not skipped).
Prints one line per run directory; tests/unit/run_directory_test.cpp reads them (tests/data/oracles/tool_cost.txt):
    python3 tests/tools/tool_cost_expected.py > tests/data/oracles/tool_cost.txt
"""
import json
import math
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUNS = ["tests/data/h100-1b-decode", "examples/ncu-budget-h100/after-1b", "examples/ncu-budget-h100/after-graphs",
        "examples/sampled-h200/s5-1b-sampled", "examples/speed-h200/after-4-1b-load"]


def factor(x):
    """Three significant digits below 2 and from 10, two between; zeros kept ("8.0x")."""
    digits = 3 if x < 2 or x >= 10 else 2
    decimals = max(0, digits - 1 - math.floor(math.log10(x)))
    return f"{x:.{decimals}f}x"


for run in RUNS:
    stages = {s["name"]: s for s in json.loads((ROOT / run / "run.json").read_text())["stages"]}
    bare = stages["stage1"]["duration_s"]
    total = sum(max(s["duration_s"], 0.0) for s in stages.values())
    ran = {tool: stages[tool]["duration_s"] for tool in ("nsys", "ncu")
           if stages[tool]["status"] not in ("skipped", "pending")}
    figures = [f"bare_s={bare:.9g}", f"run_s={total:.9g}", f"multiple={total / bare:.9g}"]
    figures += [f"{tool}_multiple={seconds / bare:.9g}" for tool, seconds in ran.items()]
    tools = ", ".join(f"{tool} {factor(seconds / bare)}" for tool, seconds in ran.items())
    summary = f"this run took {factor(total / bare)} the bare run" + (f": {tools}" if tools else "")
    print(f"{run}: " + " ".join(figures))
    print(f"{run} summary: {summary}")
