#!/usr/bin/env python3
"""Side by side, two deep-profile runs of one workload that differ only in ncu.set (e.g. llmprof and roofline):
ncu's replay passes per launch (its "- N passes" progress lines), every stage's time and the cost of profiling
as multiples of the bare run (run.json), each ncu pass's estimate beside how it ended (plan.json, run.json), and
each NVTX stage's FLOP, MFU, DRAM bytes and MBU (analysis/report.json) with their relative difference, marked
"ok" within --tolerance (default 2%). Exit status 1 when a stage figure differs by more, or is missing from one run.
MFU and MBU divide what ncu measured by the stage's time in the nsys capture (report.json rate_time_ns), which
is not ncu's: a host-bound eager decode's stage time varied 2.00 s / 1.58 s / 2.27 s over three runs on the H100
(2026-12-07), 12-21% apart with one set. So each MFU/MBU row is also given at run B's stage time ("at equal
stage time"), which compares only what the sets measured, and the verdict is that row's.
Usage: compare_ncu_sets.py RUN_A RUN_B [--tolerance 0.02]
"""
import collections
import json
import pathlib
import re
import sys

FIGURES = ("flop", "mfu", "dram_bytes", "mbu")
RATES = ("mfu", "mbu")  # over the stage's nsys time (rate_time_ns)


def passes_per_launch(main):
    counts = collections.Counter()
    for log in sorted((main / "ncu").glob("*.log")):
        for match in re.finditer(r"- (\d+) pass(?:es)?\s*$", log.read_text(errors="replace"), re.MULTILINE):
            counts[int(match.group(1))] += 1
    return dict(sorted(counts.items()))


def load(main):
    run = json.loads((main / "run.json").read_text())
    report_file = main / "analysis" / "report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {"stages": []}
    plan_file = main / "ncu" / "plan.json"
    plan = json.loads(plan_file.read_text()) if plan_file.exists() else {}
    cmd = (main / "ncu" / "cmd.txt").read_text() if (main / "ncu" / "cmd.txt").exists() else ""
    which = re.search(r"--set (\S+)|--section (LlmprofRoofline)", cmd)
    return {"run": run, "report": report, "plan": plan,
            "set": (which.group(1) or which.group(2)) if which else "?", "passes": passes_per_launch(main)}


def describe(name, data):
    run = data["run"]
    print(f"== {name}: ncu collected {data['set']}; passes per launch {data['passes']} (passes: launches)")
    print("   stages: " + ", ".join(f"{s['name']} {s['duration_s']:.1f} s ({s['status']})" for s in run["stages"]))
    if "tool_cost" in run:
        print("   " + run["tool_cost"]["summary"])
    plan = data["plan"]
    for index, step in enumerate(plan.get("passes", [])):
        print(f"   pass {index + 1}: estimated {step['estimated_seconds']:.1f} s, {step['profiled_launches']} launches")
    for stage in run["stages"]:
        for ending in stage.get("workload_endings", []):
            print(f"   {ending}")
    if plan:
        print(f"   plan: estimated {plan.get('estimated_seconds', 0):.1f} s at {plan.get('seconds_per_launch')} s a launch "
              f"({plan.get('seconds_per_launch_source')}); ncu stage took "
              f"{next((s['duration_s'] for s in run['stages'] if s['name'] == 'ncu'), 0):.1f} s")


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    tolerance = float(sys.argv[sys.argv.index("--tolerance") + 1]) if "--tolerance" in sys.argv else 0.02
    if len(arguments) < 2:
        sys.exit(__doc__)
    a_dir, b_dir = pathlib.Path(arguments[0]), pathlib.Path(arguments[1])
    a, b = load(a_dir), load(b_dir)
    describe(a_dir.name, a)
    describe(b_dir.name, b)
    failed = False
    b_stages = {(s.get("domain", ""), s["name"]): s for s in b["report"]["stages"]}
    print(f"\nstage\tfigure\t{a_dir.name}\t{b_dir.name}\trelative difference")
    for stage in a["report"]["stages"]:
        other = b_stages.get((stage.get("domain", ""), stage["name"]))
        for figure in FIGURES:
            x, y = stage.get(figure), other.get(figure) if other else None
            if x is None and y is None:
                continue
            if x is None or y is None or y == 0:
                verdict, difference = "MISSING in one run", ""
                failed = True
            else:
                relative = abs(x - y) / abs(y)
                difference = f"{relative:.2%}"
                time_a, time_b = stage.get("rate_time_ns"), other.get("rate_time_ns")
                if figure in RATES and time_a and time_b and time_a != time_b:
                    verdict = f"stage time {time_a / 1e9:.3g} s vs {time_b / 1e9:.3g} s (nsys's, not ncu's)"
                    print(f"{stage['name']}\t{figure}\t{x}\t{y}\t{difference}\t{verdict}")
                    x = x * time_a / time_b
                    figure += " at equal stage time"
                    relative = abs(x - y) / abs(y)
                    difference = f"{relative:.2%}"
                verdict = "ok" if relative <= tolerance else f"OVER {tolerance:.0%}"
                failed |= relative > tolerance
            print(f"{stage['name']}\t{figure}\t{x}\t{y}\t{difference}\t{verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
