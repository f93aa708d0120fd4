#!/usr/bin/env python3
"""Independent expected rows of an nsys SQLite export restricted to a window (parse/nsys_sqlite_window.cpp).

Reads each recorded export with Python's sqlite3 and nothing of libllmprof, picks a window from its own rows, and
applies the rule in Python over the rows it read (no SQL DELETE, as the library does):
- NVTX ranges (event types 59, 60, 70, 71) stay when they start inside the window; other NVTX events (a domain's
  creation, a registered string) always stay;
- CUDA API calls (CUPTI_ACTIVITY_KIND_RUNTIME) stay when they start inside;
- GPU work (kernels, copies, sets) stays when the call with its correlation id in its process started inside, and,
  when no call in the export has that id, when it starts inside itself;
- GPU-metrics samples stay when their timestamp is inside. Both ends of the window are inside.
A process is globalTid // 2**24 for a call and globalPid // 2**24 for GPU work.

Prints one line per case: the window (start, end in ns) and the rows left per table, the kernels' summed time; for a
whole-run capture beside nsys's own capture of the same workload's window, the kernels each holds.
Run from the repository root:  python3 tests/tools/restrict_window_expected.py
"""
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
RANGE_TYPES = (59, 60, 70, 71)
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")


def tables(db):
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def restrict(db, start, end):
    inside = lambda t: start <= t <= end  # noqa: E731
    names = tables(db)
    left = {}
    calls = {}  # (process, correlation) -> started inside
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in names:
        rows = db.execute("SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchall()
        for at, thread, correlation in rows:
            key = (thread // 2**24, correlation)
            calls[key] = calls.get(key, False) or inside(at)
        left["runtime"] = sum(1 for at, _, _ in rows if inside(at))
    if "NVTX_EVENTS" in names:
        rows = db.execute("SELECT start, eventType FROM NVTX_EVENTS").fetchall()
        left["nvtx"] = sum(1 for at, kind in rows if kind not in RANGE_TYPES or inside(at))
    kernel_ns = 0
    for table in GPU_TABLES:
        if table not in names:
            continue
        kept = 0
        for at, finish, process, correlation in db.execute(
                f"SELECT start, end, globalPid, correlationId FROM {table}"):
            key = (process // 2**24, correlation)
            if calls[key] if key in calls else inside(at):
                kept += 1
                if table == "CUPTI_ACTIVITY_KIND_KERNEL":
                    kernel_ns += finish - at
        left[table.rsplit("_", 1)[1].lower()] = kept
    if "GPU_METRICS" in names:
        left["samples"] = sum(1 for (at,) in db.execute("SELECT timestamp FROM GPU_METRICS") if inside(at))
    left["kernel_ns"] = kernel_ns
    return left


def calls_window(db, first, last):
    """From the start of the first-th CUDA call to the start of the last-th (0-based, by start)."""
    starts = [row[0] for row in db.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")]
    return starts[first], starts[last]


def ranges_window(db, first, last):
    """From the start of the first-th NVTX range to the end of the last-th (0-based, by start)."""
    rows = db.execute("SELECT start, end FROM NVTX_EVENTS WHERE eventType IN (59, 60, 70, 71) "
                      "ORDER BY start").fetchall()
    return rows[first][0], rows[last][1]


def profiler_window(db):
    """The workload's own window: the starts of its first cudaProfilerStart and the next cudaProfilerStop call."""
    calls = db.execute("SELECT s.value, r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                       "WHERE s.value LIKE 'cudaProfilerSt%' OR s.value LIKE 'cuProfilerSt%' ORDER BY r.start")
    start = stop = None
    for name, at in calls:
        if "Start" in name and start is None:
            start = at
        elif "Stop" in name and start is not None:
            stop = at
            break
    return start, stop


def window_capture_kernels(path):
    """Kernels in nsys's own capture gated on the window (--capture-range=cudaProfilerApi) of the same workload."""
    db = sqlite3.connect(f"file:{DATA / path}?mode=ro", uri=True)
    return db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]


# A whole-run capture of a workload with its own window, beside nsys's capture gated on that window (the same
# program run again): restricted to the window, the whole run must hold the window capture's kernels.
PAIRS = [
    ("hf_small_whole_window in its window", "zoo/hf_small_whole_window.sqlite", "zoo/hf_small_window.sqlite"),
    ("engine_eager_spawn_whole_window in its window", "zoo/engine_eager_spawn_whole_window.sqlite",
     "zoo/engine_eager_spawn_small_window.sqlite"),
]

CASES = [
    ("engine_eager_spawn_none calls 1000..3000", "zoo/engine_eager_spawn_none.sqlite", calls_window, 1000, 3000),
    ("hf_dynamic_window calls 500..2500", "zoo/hf_dynamic_window.sqlite", calls_window, 500, 2500),
    ("many_steps_graph_sampled ranges 2..5", "zoo/many_steps_graph_sampled.sqlite", ranges_window, 2, 5),
]


def main():
    for label, path, window, first, last in CASES:
        db = sqlite3.connect(f"file:{DATA / path}?mode=ro", uri=True)
        start, end = window(db, first, last)
        left = restrict(db, start, end)
        figures = " ".join(f"{key}={value}" for key, value in left.items())
        print(f"{label}: start={start} end={end} {figures}")
    for label, whole, window in PAIRS:
        db = sqlite3.connect(f"file:{DATA / whole}?mode=ro", uri=True)
        start, end = profiler_window(db)
        left = restrict(db, start, end)
        print(f"{label}: start={start} end={end} kernel={left['kernel']} kernel_ns={left['kernel_ns']} "
              f"whole_kernels={db.execute('SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0]} "
              f"window_capture_kernels={window_capture_kernels(window)}")


if __name__ == "__main__":
    main()
