#!/usr/bin/env python3
"""Independent expected figures for tests/unit/timeline_test.cpp, from the trimmed nsys SQLite exports.

Uses Python's sqlite3 module only (no code shared with libllmprof) and a different algorithm: every
row is loaded, each stage's instances are searched by bisection for the one open at a moment, and
unions are taken by sorting whole interval lists. Writes tests/data/nsys-sqlite/expected.tsv
(file, stage, figure, value), which the C++ test compares against the engine; ctest runs it with
--stdout and fails when its figures differ from that file (tests/cmake/oracles.cmake). Re-run it after
changing a fixture:
    python3 tests/tools/timeline_expected.py
Definitions (the same as libllmprof/internal/llmprof/timeline.hpp's): an API call belongs to an instance of a stage when it starts
on the instance's thread inside [start, end]; a GPU row belongs where its launching call (same
correlation id) belongs; busy = union of the GPU intervals; an instance's window runs from its CPU
start to the later of its CPU end and its last GPU end; active = union of the windows; busy fraction
= busy / active; correlation ids are per process, so a GPU row's launch is the call with the same
(process, correlation id), the process being globalTid >> 24 for calls and globalPid >> 24 for GPU rows; warm-up = leading instances longer than 1.5x the median (at most half, 3+ instances).
"""
import bisect
import collections
import math
import pathlib
import sqlite3
import sys

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nsys-sqlite"
FILES = ["graphtrace", "nodetrace", "eager", "ex1b8", "cpu2022", "twoproc2022", "twoproc2025"]


def kind_of(name):
    if "Synchronize" in name or "StreamWaitEvent" in name or "StreamQuery" in name:
        return "sync"
    if "GraphLaunch" in name:
        return "graph"
    if "LaunchKernel" in name or "LaunchCooperativeKernel" in name or name.startswith("cuLaunch"):
        return "kernel"
    if "Memcpy" in name or "Memset" in name:
        return "copy"
    return None


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def union(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def nearest_rank(values, p):
    v = sorted(values)
    return v[max(math.ceil(p / 100 * len(v)), 1) - 1]


def load(path):
    db = sqlite3.connect(path)
    have = tables(db)
    domains = {(r[0] >> 24, r[1]): r[2] for r in db.execute(
        "SELECT globalTid, domainId, text FROM NVTX_EVENTS WHERE eventType = 75")}
    stages = collections.defaultdict(list)  # (domain, name) -> [(start, end, tid)]
    for start, end, tid, name, dom in db.execute(
            "SELECT n.start, n.end, n.globalTid, coalesce(n.text, s.value), n.domainId FROM NVTX_EVENTS n "
            "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60, 70, 71) AND n.end IS NOT NULL"):
        domain = domains.get((tid >> 24, dom), "") if dom else ""
        stages[(domain, name)].append((start, end, tid))
    for key in stages:
        stages[key].sort()
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    calls = {}  # (process, correlationId) -> (tid, start) for launch-class calls
    api = []
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in have:
        for start, end, tid, corr, name_id in db.execute(
                "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
            kind = kind_of(names.get(name_id, ""))
            if kind is None:
                continue
            api.append((start, end, tid, (tid >> 24, corr), kind))
            if kind != "sync" and (tid >> 24, corr) not in calls:
                calls[(tid >> 24, corr)] = (tid, start)
    gpu = []  # (start, end, (process, correlationId), label, in_graph, is_graph_exec)
    for table, label in [("CUPTI_ACTIVITY_KIND_KERNEL", None), ("CUPTI_ACTIVITY_KIND_MEMCPY", "[CUDA memcpy]"),
                         ("CUPTI_ACTIVITY_KIND_MEMSET", "[CUDA memset]"),
                         ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "[CUDA graph execution]")]:
        if table not in have:
            continue
        cols = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        name_col = "demangledName" if label is None else "NULL"
        node_col = "graphNodeId" if "graphNodeId" in cols else "NULL"
        for start, end, corr, pid, name_id, node in db.execute(
                f"SELECT start, end, correlationId, globalPid >> 24, {name_col}, {node_col} FROM {table}"):
            is_exec = table.endswith("GRAPH_TRACE")
            gpu.append((start, end, (pid, corr), label or names.get(name_id, ""), is_exec or node is not None, is_exec))
    recorded = {g[2] for g in gpu}
    return stages, api, calls, gpu, recorded


def figures(path):
    stages, api, calls, gpu, recorded = load(path)
    out = {}
    for key, instances in stages.items():
        by_thread = collections.defaultdict(list)
        for i, (s, e, tid) in enumerate(instances):
            by_thread[tid].append((s, e, i))

        def owner(tid, t):
            rows = by_thread.get(tid, [])
            j = bisect.bisect_right(rows, (t, float("inf"), float("inf"))) - 1
            return rows[j][2] if j >= 0 and rows[j][1] >= t else None

        n = len(instances)
        per = [dict(busy=[], launches=0, lost=0, glaunch=0, glost=0, gexec=0) for _ in range(n)]
        launch_ns = sync_ns = 0
        for start, end, tid, corr, kind in api:
            i = owner(tid, start)
            if i is None:
                continue
            if kind == "sync":
                sync_ns += end - start
                continue
            launch_ns += end - start
            per[i]["launches"] += 1
            per[i]["lost"] += corr not in recorded
            if kind == "graph":
                per[i]["glaunch"] += 1
                per[i]["glost"] += corr not in recorded
        kernels = collections.defaultdict(lambda: [0, 0, False])
        gpu_time = graph_time = 0
        for start, end, corr, label, in_graph, is_exec in gpu:
            if corr not in calls:
                continue
            i = owner(*calls[corr])
            if i is None:
                continue
            per[i]["busy"].append((start, end))
            per[i]["gexec"] += is_exec
            gpu_time += end - start
            graph_time += (end - start) if in_graph else 0
            k = kernels[label]
            k[0] += 1
            k[1] += end - start
            k[2] = k[2] or in_graph
        durations = [e - s for s, e, _ in instances]
        windows = [(s, max(e, max((b[1] for b in p["busy"]), default=e))) for (s, e, _), p in zip(instances, per)]
        busy = union([b for p in per for b in p["busy"]])
        active = union(windows)
        warm = 0
        if n >= 3:
            median = sorted(durations)[n // 2]
            while warm < n // 2 and durations[warm] > 1.5 * median:
                warm += 1
        steady = [i for i in range(warm, n) if per[i]["lost"] == 0]
        steady_busy = [union(per[i]["busy"]) for i in steady]
        lost = sum(p["lost"] for p in per)
        f = out.setdefault(key[0] + ":" + key[1] if key[0] else key[1], {})
        f.update(count=n, total_ns=sum(durations), mean_ns=sum(durations) / n, p50_ns=nearest_rank(durations, 50),
                 p90_ns=nearest_rank(durations, 90), p99_ns=nearest_rank(durations, 99), max_ns=max(durations),
                 gpu_busy_ns=busy, active_ns=active, launch_api_ns=launch_ns, sync_api_ns=sync_ns,
                 launches=sum(p["launches"] for p in per), launches_without_record=lost,
                 graph_launches=sum(p["glaunch"] for p in per),
                 graph_launches_without_record=sum(p["glost"] for p in per),
                 graph_executions=sum(p["gexec"] for p in per), gpu_time_ns=gpu_time, graph_time_ns=graph_time,
                 warmup_instances=warm)
        if lost == 0 and gpu_time > 0:
            f["gpu_busy_fraction"] = busy / active
        if gpu_time > 0 and steady_busy:
            f["steady_gpu_busy_mean_ns"] = sum(steady_busy) / len(steady_busy)
            f["steady_gpu_busy_count"] = len(steady_busy)
        if kernels:
            top = max(kernels.items(), key=lambda kv: (kv[1][1], kv[0]))
            f["top_kernel"] = top[0]
            f["top_kernel_count"] = top[1][0]
            f["top_kernel_total_ns"] = top[1][1]
            f["top_kernel_from_graph"] = int(top[1][2])
            f["graph_kernel_names"] = sum(1 for k in kernels.values() if k[2] and k[0] > 0)
    return out


def main():
    lines = ["# file\tstage\tfigure\tvalue (written by tests/tools/timeline_expected.py; do not edit)"]
    for name in FILES:
        for stage, values in sorted(figures(DATA / f"{name}.sqlite").items()):
            for figure, value in values.items():
                text = repr(value) if isinstance(value, float) else str(value)
                lines.append(f"{name}\t{stage}\t{figure}\t{text}")
    text = "\n".join(lines) + "\n"
    if "--stdout" in sys.argv[1:]:  # what tests/tools/run_oracle.py compares with the committed file
        sys.stdout.write(text)
        return
    (DATA / "expected.tsv").write_text(text)
    print(f"wrote {DATA / 'expected.tsv'} ({len(lines) - 1} figures)")


if __name__ == "__main__":
    main()
