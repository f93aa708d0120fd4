#!/usr/bin/env python3
"""Independent expected figures for tests/unit/step_kinds_test.cpp, from the serving fixtures' SQLite exports.

Python's sqlite3 only, nothing shared with libllmprof, and its own algorithm: push/pop ranges (eventType 59)
are nested by a stack walk per thread in start order (a range's parent is the innermost open range on its
thread when it starts), where the engine builds stages from the timeline. Figures (as llmprof/step_kinds.hpp
defines them, for a capture without GPU work): the step range is the outermost range with a child named
*_batch; the kinds are its *_batch children; a step of a kind lasts end - start; p50/p90/p99 are nearest-rank;
the process is (globalTid >> 24) & 0xFFFFFF. Also the discovery facts (ranges, counts, parents, the
cudaProfilerStart/Stop calls in CUPTI_ACTIVITY_KIND_RUNTIME).
Writes tests/data/serving/expected.tsv (file, subject, figure, value). Re-run after changing a fixture:
    python3 tests/tools/step_kinds_expected.py
"""
import collections
import math
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "serving"
FILES = ["engine_loop_cpu2022"]


def nearest_rank(values, percent):
    ordered = sorted(values)
    index = max(1, math.ceil(percent / 100.0 * len(ordered)))
    return ordered[index - 1]


def ranges_of(db):
    rows = db.execute(
        "SELECT start, end, globalTid, COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) "
        "FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL ORDER BY globalTid, start, end DESC").fetchall()
    ranges = []
    stacks = collections.defaultdict(list)
    for start, end, thread, name in rows:
        stack = stacks[thread]
        while stack and stack[-1]["end"] < start:
            stack.pop()
        parent = stack[-1]["name"] if stack else None
        entry = {"start": start, "end": end, "thread": thread, "name": name, "parent": parent}
        ranges.append(entry)
        stack.append(entry)
    return ranges


def figures(path):
    db = sqlite3.connect(path)
    ranges = ranges_of(db)
    out = []
    counts = collections.Counter(r["name"] for r in ranges)
    parents = {}
    for r in sorted(ranges, key=lambda r: r["start"]):
        parents.setdefault(r["name"], r["parent"])
    for name in sorted(counts):
        out.append((name, "count", counts[name]))
        out.append((name, "parent", parents[name] or "-"))
    step = None
    for r in sorted(ranges, key=lambda r: r["start"]):
        children = {c["name"] for c in ranges if c["parent"] == r["name"]}
        if any(c.endswith("_batch") for c in children):
            step = r["name"]
            break
    out.append(("steps", "step_range", step))
    out.append(("steps", "count", counts[step]))
    kinds = sorted({r["name"] for r in ranges if r["parent"] == step and r["name"].endswith("_batch")})
    out.append(("steps", "kinds", ",".join(kinds)))
    for kind in kinds:
        durations = [r["end"] - r["start"] for r in ranges if r["name"] == kind]
        for percent in (50, 90, 99):
            out.append((kind, "p%d_ns" % percent, nearest_rank(durations, percent)))
        processes = sorted({(r["thread"] >> 24) & 0xFFFFFF for r in ranges if r["name"] == kind})
        out.append((kind, "processes", ",".join(str(p) for p in processes)))
    # A window bounded in steps: steps 10..29 of the step range, and the kind ranges that start inside them.
    step_ranges = sorted((r for r in ranges if r["name"] == step), key=lambda r: r["start"])[10:30]
    for kind in kinds:
        inside = [r for r in ranges if r["name"] == kind and any(
            s["thread"] == r["thread"] and s["start"] <= r["start"] <= s["end"] for s in step_ranges)]
        out.append((kind, "count_in_steps_10_to_29", len(inside)))
    starts = stops = 0
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for name, count in db.execute(
                "SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON r.nameId = s.id "
                "GROUP BY s.value"):
            if name.startswith(("cudaProfilerStart", "cuProfilerStart")):
                starts += count
            if name.startswith(("cudaProfilerStop", "cuProfilerStop")):
                stops += count
    out.append(("profiler_api", "start_calls", starts))
    out.append(("profiler_api", "stop_calls", stops))
    return out


def main():
    lines = ["file\tsubject\tfigure\tvalue"]
    for name in FILES:
        for subject, figure, value in figures(DATA / (name + ".sqlite")):
            lines.append("%s\t%s\t%s\t%s" % (name, subject, figure, value))
    (DATA / "expected.tsv").write_text("\n".join(lines) + "\n")
    print("wrote", DATA / "expected.tsv", len(lines) - 1, "figures")


if __name__ == "__main__":
    main()
