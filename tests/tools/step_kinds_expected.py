#!/usr/bin/env python3
"""Independent expected figures for tests/unit/step_kinds_test.cpp, from the serving fixtures' SQLite exports.

Python's sqlite3 only, nothing shared with libllmprof, and its own algorithm: push/pop ranges (eventType 59)
are nested by a stack walk per thread in start order (a range's parent is the innermost open range on its
thread when it starts), where the engine builds stages from the timeline. Figures (as llmprof/step_kinds.hpp
defines them): the step range is the outermost range with a child named
*_batch; the kinds are its *_batch children; a step of a kind lasts end - start; p50/p90/p99 are nearest-rank;
the process is (globalTid >> 24) & 0xFFFFFF; a kind's GPU busy share is its busy time (the union of its GPU work
within each step, summed) over its steps' summed time. Also the discovery facts (ranges, counts, parents, the
cudaProfilerStart/Stop calls in CUPTI_ACTIVITY_KIND_RUNTIME).
Writes tests/data/serving/expected.tsv (file, subject, figure, value). Re-run after changing a fixture:
    python3 tests/tools/step_kinds_expected.py
With --stdout it prints the file instead (ctest's "oracle: step_kinds_expected.py ..." compares the two).
"""
import collections
import json
import math
import pathlib
import sqlite3
import sys

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "serving"
FILES = ["engine_loop_cpu2022", "serving_window1_h100", "serving_window2_h100", "engine_flat_cpu2022",
         "engine_flat_sglang_cpu2022", "engine_domain_cpu2022", "serving_flat_h200", "serving_flat_sglang_h200"]
# Kind names: vLLM's *_batch, or an engine mode (SGLang's forward modes, and "prefill").
MODES = {"prefill", "decode", "extend", "mixed", "idle"}


def is_kind(name):
    return name is not None and ((len(name) > 6 and name.endswith("_batch")) or name in MODES)
# The workload's own step tokens for a fixture (llmprof.step_tokens/1): file under DATA, window index.
TOKENS = {"serving_window1_h100": ("serving_h100_step_tokens.json", 0),
          "serving_window2_h100": ("serving_h100_step_tokens.json", 1)}
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


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


def gpu_work_by_call(db, tables):
    """(pid, correlationId) -> [(start, end, kernel name or None)] of the GPU activities a CUDA call launched."""
    work = collections.defaultdict(list)
    for table in GPU_TABLES:
        if table not in tables:
            continue
        name = "(SELECT value FROM StringIds WHERE id = demangledName)" if table.endswith("KERNEL") else "NULL"
        for start, end, pid, correlation, kernel in db.execute(
                f"SELECT start, end, globalPid, correlationId, {name} FROM {table}"):
            work[((pid >> 24) & 0xFFFFFF, correlation)].append((start, end, kernel))
    return work


def launches_of(db, tables):
    """thread -> [(start, correlationId)] of its CUDA runtime calls, in start order."""
    calls = collections.defaultdict(list)
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for start, thread, correlation in db.execute(
                "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"):
            calls[thread].append((start, correlation))
    return calls


def union_length(intervals):
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def gpu_figures(db, tables, ranges, kinds):
    """Per kind: the GPU activities launched by CUDA calls its ranges enclose (same thread), their summed time,
    their union within each step, the step time extended to its last GPU end, and the heaviest kernel."""
    work, calls = gpu_work_by_call(db, tables), launches_of(db, tables)
    out = []
    for kind in kinds:
        durations, gpu_time, busy, kernels = [], 0, 0, collections.Counter()
        for r in (r for r in ranges if r["name"] == kind):
            pid = (r["thread"] >> 24) & 0xFFFFFF
            activities = [a for start, correlation in calls[r["thread"]] if r["start"] <= start <= r["end"]
                          for a in work.get((pid, correlation), [])]
            durations.append(max([r["end"]] + [end for _, end, _ in activities]) - r["start"])
            gpu_time += sum(end - start for start, end, _ in activities)
            busy += union_length([(start, end) for start, end, _ in activities])
            for start, end, kernel in activities:
                if kernel is not None:
                    kernels[kernel] += end - start
        for percent in (50, 90, 99):
            out.append((kind, "p%d_ns" % percent, nearest_rank(durations, percent)))
        out.append((kind, "step_time_total_ns", sum(durations)))
        out.append((kind, "gpu_time_ns", gpu_time))
        out.append((kind, "gpu_busy_ns", busy))
        # The share of its steps' time the GPU was busy: "-" (absent) when the steps took no time.
        out.append((kind, "gpu_busy_share", repr(busy / sum(durations)) if sum(durations) > 0 else "-"))
        if kernels:
            top = max(kernels.items(), key=lambda item: (item[1], item[0]))
            out.append((kind, "top_kernel", top[0]))
            out.append((kind, "top_kernel_ns", top[1]))
    return out


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
    # The step range: the first range (by start) with a kind among its children and at least as many instances as
    # each such child; without one, the kinds stand alone (each instance a step): kind-named ranges whose parent
    # is no kind.
    step = None
    for r in sorted(ranges, key=lambda r: r["start"]):
        children = {c["name"] for c in ranges if c["parent"] == r["name"] and is_kind(c["name"])}
        if children and all(counts[c] <= counts[r["name"]] for c in children):
            step = r["name"]
            break
    if step is not None:
        kinds = sorted({r["name"] for r in ranges if r["parent"] == step and is_kind(r["name"])})
        steps = sorted((r for r in ranges if r["name"] == step), key=lambda r: r["start"])
    else:
        kinds = sorted({r["name"] for r in ranges if is_kind(r["name"]) and not is_kind(parents[r["name"]])})
        steps = sorted((r for r in ranges if r["name"] in kinds), key=lambda r: r["start"])
    out.append(("steps", "step_range", step or "-"))
    out.append(("steps", "count", len(steps)))
    out.append(("steps", "kinds", ",".join(kinds)))
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    out.extend(gpu_figures(db, tables, ranges, kinds))
    if step is not None and any(t in tables for t in GPU_TABLES):
        # The whole step's GPU work (its kind and its sampling): what steps cut at synchronisation hold.
        out.extend(row for row in gpu_figures(db, tables, ranges, [step]) if row[1] == "gpu_time_ns")
    for kind in kinds:
        processes = sorted({(r["thread"] >> 24) & 0xFFFFFF for r in ranges if r["name"] == kind})
        out.append((kind, "processes", ",".join(str(p) for p in processes)))
    # A window bounded in steps: steps 10..29, and the kind ranges that start inside them (flat: that are them).
    window = steps[10:30]
    for kind in kinds:
        inside = [r for r in ranges if r["name"] == kind and any(
            s["thread"] == r["thread"] and s["start"] <= r["start"] <= s["end"] for s in window)]
        out.append((kind, "count_in_steps_10_to_29", len(inside)))
    starts = stops = 0
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
    # The window's GPU time, which a kind's share of it is of: every GPU activity the capture recorded.
    window = sum(db.execute(f"SELECT coalesce(sum(end - start), 0) FROM {table}").fetchone()[0]
                 for table in GPU_TABLES if table in tables)
    out.append(("window", "gpu_time_ns", window))
    return out


def token_figures(name, expected):
    """Time per token per kind: the workload's own tokens (TOKENS[name], its step_tokens file and window) over
    the kind's summed step time (the figure printed above), when its step count equals the capture's."""
    if name not in TOKENS:
        return []
    path, window = TOKENS[name]
    counted = json.loads((DATA / path).read_text())["windows"][window]["kinds"]
    out = []
    for kind, counts in sorted(counted.items()):
        if ("%s/count" % kind) not in expected:
            continue
        tokens = counts["prompt_tokens"] + counts["decode_tokens"]
        if counts["steps"] != int(expected["%s/count" % kind]) or tokens == 0:
            out.append((kind, "time_per_token_ns", "withheld"))
            continue
        out.append((kind, "time_per_token_ns", repr(int(expected["%s/step_time_total_ns" % kind]) / tokens)))
        out.append((kind, "tokens_per_step", repr(tokens / counts["steps"])))
    return out


def main():
    lines = ["file\tsubject\tfigure\tvalue"]
    for name in FILES:
        rows = figures(DATA / (name + ".sqlite"))
        rows += token_figures(name, {"%s/%s" % (subject, figure): str(value) for subject, figure, value in rows})
        for subject, figure, value in rows:
            lines.append("%s\t%s\t%s\t%s" % (name, subject, figure, value))
    text = "\n".join(lines) + "\n"
    if "--stdout" in sys.argv[1:]:  # what tests/tools/run_oracle.py compares with the committed file
        sys.stdout.write(text)
        return
    (DATA / "expected.tsv").write_text(text)
    print("wrote", DATA / "expected.tsv", len(lines) - 1, "figures")


if __name__ == "__main__":
    main()
