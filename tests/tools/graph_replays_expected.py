#!/usr/bin/env python3
"""Independent expected figures for the gaps between CUDA graph replays (tests/unit/timeline_test.cpp), from the
recorded H100 graph decode exports in tests/data/nsys-sqlite (graph-traced and node-traced), with Python's sqlite3
only and a different algorithm from libllmprof's: replays are grouped by their launch call and taken in launch
order, where the engine streams GPU rows in start order.

Definitions (libllmprof/internal/llmprof/timeline.hpp, GraphReplayGaps):
- a replay is the GPU work of one cudaGraphLaunch call: its CUPTI_ACTIVITY_KIND_GRAPH_TRACE row (graph trace) or its
  kernel/memcpy rows with a graphNodeId (node trace), joined by (process, correlationId); a row's start is taken
  no earlier than its launch call's start;
- a replay belongs to a stage when its launch call starts on a thread inside an instance of the stage;
- a pair is two consecutive replays of one thread in a stage with no graph launch call without any GPU row on that
  thread between their launch calls;
- gap = max(0, next GPU start - previous GPU end); before launch = the part of a gap before the next launch call
  started; host between = max(0, next launch call start - previous launch call end); replay GPU = last end - first
  start of each replay. Summaries: count, total, mean, nearest-rank p50/p90/p99, max.

Prints tests/data/oracles/graph_replays.txt (tests/cmake/oracles.cmake compares):
    python3 tests/tools/graph_replays_expected.py > tests/data/oracles/graph_replays.txt
"""
import collections
import math
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nsys-sqlite"
FILES = ["graphtrace", "nodetrace", "eager", "twoproc2022", "twoproc2025"]


def summary(values):
    v = sorted(values)
    rank = lambda p: v[max(math.ceil(p / 100 * len(v)), 1) - 1]
    return dict(count=len(v), total=sum(v), mean=sum(v) / len(v), p50=rank(50), p90=rank(90), p99=rank(99),
                max=v[-1])


def replay_figures(path):
    db = sqlite3.connect(path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    # Stage instances by thread: name -> [(start, end, thread)].
    stages = collections.defaultdict(list)
    for start, end, tid, name in db.execute(
            "SELECT n.start, n.end, n.globalTid, coalesce(n.text, s.value) FROM NVTX_EVENTS n "
            "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL"):
        stages[name].append((start, end, tid))
    # Graph launch calls: (process, correlationId) -> (thread, start, end).
    launches = {}
    for start, end, tid, corr, name_id in db.execute(
            "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"):
        if "GraphLaunch" in names.get(name_id, ""):
            launches[(tid >> 24, corr)] = (tid, start, end)
    # GPU rows of graphs, by their launch.
    rows = collections.defaultdict(list)
    if "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables:
        for start, end, pid, corr in db.execute(
                "SELECT start, end, globalPid >> 24, correlationId FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
            rows[(pid, corr)].append((start, end))
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if table not in tables:
            continue
        columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
        if "graphNodeId" not in columns:
            continue
        for start, end, pid, corr in db.execute(
                f"SELECT start, end, globalPid >> 24, correlationId FROM {table} WHERE graphNodeId IS NOT NULL"):
            rows[(pid, corr)].append((start, end))
    lost = collections.defaultdict(list)  # thread -> starts of graph launch calls without any GPU row
    for key, (tid, start, _) in launches.items():
        if key not in rows:
            lost[tid].append(start)
    replays = []  # (thread, launch start, launch end, gpu start, gpu end)
    for key, work in rows.items():
        if key not in launches:
            continue
        tid, launch_start, launch_end = launches[key]
        replays.append((tid, launch_start, launch_end, min(max(s, launch_start) for s, _ in work),
                        max(e for _, e in work)))
    out = {}
    for name, instances in sorted(stages.items()):
        mine = [r for r in replays if any(t == r[0] and s <= r[1] <= e for s, e, t in instances)]
        by_thread = collections.defaultdict(list)
        for r in mine:
            by_thread[r[0]].append(r)
        gaps, before, host = [], 0, []
        for tid, own in by_thread.items():
            own.sort(key=lambda r: r[1])
            for prev, nxt in zip(own, own[1:]):
                if any(prev[1] < t < nxt[1] for t in lost[tid]):
                    continue
                gap = max(0, nxt[3] - prev[4])
                gaps.append(gap)
                if gap > 0:
                    before += min(max(nxt[1], prev[4]), nxt[3]) - prev[4]
                host.append(max(0, nxt[1] - prev[2]))
        if not gaps:
            out[name] = None
            continue
        out[name] = dict(replays=len(mine), gap=summary(gaps), before=before, host=summary(host),
                         replay=summary([r[4] - r[3] for r in mine]))
    return out


def main():
    for file in FILES:
        for stage, figures in replay_figures(DATA / f"{file}.sqlite").items():
            if figures is None:
                print(f"{file} {stage}: no pair of consecutive graph replays")
                continue
            gap, host, replay = figures["gap"], figures["host"], figures["replay"]
            print(f"{file} {stage}: replays={figures['replays']} pairs={gap['count']} gap_total_ns={gap['total']} "
                  f"gap_mean_ns={gap['mean']!r} gap_p50_ns={gap['p50']} gap_max_ns={gap['max']} "
                  f"gap_before_launch_ns={figures['before']} host_between_total_ns={host['total']} "
                  f"host_between_mean_ns={host['mean']!r} host_between_p50_ns={host['p50']} "
                  f"host_between_max_ns={host['max']} replay_gpu_mean_ns={replay['mean']!r} "
                  f"replay_gpu_count={replay['count']}")


if __name__ == "__main__":
    main()
