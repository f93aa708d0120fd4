#!/usr/bin/env python3
"""Copies an nsys SQLite export into tests/data with only what the timeline engine and its tests read.

Why: the recorded exports are megabytes and carry the recording machine's environment (process list,
environment variables, absolute paths). The trimmed copy keeps every row of NVTX_EVENTS, of the
GPU activity tables and of the CUDA API calls that launch or wait for GPU work, so figures computed
from it (by the engine and by timeline_expected.py) are those of the original capture.

Usage: trim_nsys_sqlite.py SOURCE.sqlite DEST.sqlite [--from RANGE:N] [--until RANGE:N] [--keep-gpu-bus]
                           [--read-metrics-only] [--samples-after-ranges MS]
  --until RANGE:N  also cut the capture where the (N+1)-th NVTX range named RANGE starts: ranges and API
                   calls from then on go, and so do GPU rows launched by a call that went (a prefix of
                   the capture, e.g. the first 12 decode steps, when the whole is too big for a fixture).
  --from RANGE:N   also cut the capture before the (N+1)-th NVTX range named RANGE starts: ranges that end
                   before it, API calls before it and the GPU rows they launched, samples before it go.
  --read-metrics-only  keep the samples of the four metrics the library reads (SM, tensor, DRAM read/write).
  --samples-after-ranges MS  keep GPU-metrics samples only up to MS milliseconds after the last NVTX range ends
                   (a capture of nsys --trace=nvtx samples the whole run; the idle tail after the ranges is most of it).
  --keep-gpu-bus   keep each GPU's PCI bus location (and the capture's start on the wall clock): per-rank
                   sampling matches a rank's GPU to the sampled one by bus and aligns captures by that start.
"""
import argparse
import os
import shutil
import sqlite3
import sys

KEPT_TABLES = {
    "StringIds", "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "META_DATA_EXPORT", "EXPORT_META_DATA",
    # Four integers with no environment in them: the capture's start since the session's (nsys 2025.3), the
    # ncu plan's measure of the workload's start-up to the stage (stage_start_up_seconds).
    "ANALYSIS_DETAILS",
    # GPU-metrics sampling (nsys --gpu-metrics-devices, issue 36): timestamps, metric ids and values, and the
    # metric names; no environment in either. TARGET_INFO_GPU names the GPU and its peak DRAM bandwidth.
    "GPU_METRICS", "TARGET_INFO_GPU_METRICS", "TARGET_INFO_GPU",
}
KEPT_COLUMNS = {  # activity tables: the columns the engine reads (others only cost bytes)
    # Launch configurations and mangled names: the per-kernel ncu plan reads them (ncu_plan_io.cpp).
    "CUPTI_ACTIVITY_KIND_KERNEL": {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                                   "globalPid", "demangledName", "shortName", "mangledName", "graphNodeId",
                                   "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                                   "staticSharedMemory", "dynamicSharedMemory"},
    "CUPTI_ACTIVITY_KIND_MEMCPY": {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                                   "globalPid", "bytes", "copyKind", "graphNodeId"},
    "CUPTI_ACTIVITY_KIND_MEMSET": {"start", "end", "deviceId", "contextId", "streamId", "correlationId",
                                   "globalPid", "bytes", "graphNodeId"},
}
# With --keep-gpu-bus: the capture's start in UTC (one row of integers), and the GPU-metrics sources and
# event types, whose JSON names the sampled GPUs (nsys 2025.3.1).
BUS_TABLES = {"TARGET_INFO_SESSION_START_TIME", "GENERIC_EVENT_SOURCES", "GENERIC_EVENT_TYPES"}
# CUDA API calls kept: the ones that launch GPU work or wait for it (the rest are getters), and the workload's
# cudaProfilerStart/Stop calls, which open and close its own window (range discovery reads them).
API_KEPT = ("%Launch%", "%Memcpy%", "%Memset%", "%Synchronize%", "%StreamWaitEvent%", "%Graph%", "%ProfilerSt%")


def range_starts(db, range_name):
    return [r[0] for r in db.execute(
        "SELECT e.start FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
        "WHERE coalesce(e.text, s.value) = ? ORDER BY e.start", (range_name,))]


def cut(db, tables, range_name, count, before):
    """Cuts the capture where the (count+1)-th range named range_name starts: what comes after (before=False) or,
    with before=True, what ends before it (ranges), starts before it (API calls, samples) and the GPU rows those
    calls launched."""
    starts = range_starts(db, range_name)
    if len(starts) <= count:
        return
    at = starts[count]
    gone = "< ?" if before else ">= ?"
    db.execute(f"DELETE FROM NVTX_EVENTS WHERE {'coalesce(end, start)' if before else 'start'} {gone}", (at,))
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:  # an export of nsys --trace=nvtx has none
        db.execute(f"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start {gone}", (at,))
    if "GPU_METRICS" in tables:
        db.execute(f"DELETE FROM GPU_METRICS WHERE timestamp {gone}", (at,))
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                  "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
        if table in tables:  # correlation ids are per process: one process per export here
            db.execute(f"DELETE FROM {table} WHERE correlationId NOT IN "
                       "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME)")


READ_METRICS = ("SMs Active%", "Tensor Active%", "DRAM Read Bandwidth%", "DRAM Write Bandwidth%")


def main(source, dest, until=None, keep_gpu_bus=False, since=None, read_metrics_only=False,
         samples_after_ranges=None):
    if os.path.exists(dest):
        os.remove(dest)
    shutil.copyfile(source, dest)
    db = sqlite3.connect(dest)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    kept_tables = KEPT_TABLES | (BUS_TABLES if keep_gpu_bus else set())
    for table in tables:
        if table not in kept_tables:
            db.execute(f'DROP TABLE "{table}"')
    for table, keep in KEPT_COLUMNS.items():
        if table in tables:
            for (_, column, *_rest) in db.execute(f'PRAGMA table_info("{table}")').fetchall():
                if column not in keep:
                    db.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        condition = " OR ".join("s.value LIKE ?" for _ in API_KEPT)
        db.execute("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId NOT IN "
                   f"(SELECT s.id FROM StringIds s WHERE {condition})", API_KEPT)
    if until:
        range_name, count = until.rsplit(":", 1)
        cut(db, tables, range_name, int(count), before=False)
    if since:
        range_name, count = since.rsplit(":", 1)
        cut(db, tables, range_name, int(count), before=True)
    if samples_after_ranges is not None and "GPU_METRICS" in tables:
        last_end = db.execute("SELECT max(end) FROM NVTX_EVENTS").fetchone()[0]
        db.execute("DELETE FROM GPU_METRICS WHERE timestamp > ?", (last_end + int(samples_after_ranges * 1e6),))
    if read_metrics_only and "GPU_METRICS" in tables:
        condition = " OR ".join("metricName LIKE ?" for _ in READ_METRICS)
        db.execute(f"DELETE FROM GPU_METRICS WHERE metricId NOT IN "
                   f"(SELECT metricId FROM TARGET_INFO_GPU_METRICS WHERE {condition})", READ_METRICS)
    # Strings still referenced; everything else (environment, process and thread names) goes.
    referenced = set()
    for table, column in [("NVTX_EVENTS", "textId"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId"),
                          ("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName"),
                          ("CUPTI_ACTIVITY_KIND_KERNEL", "shortName"),
                          ("CUPTI_ACTIVITY_KIND_KERNEL", "mangledName")]:
        if table in tables:
            referenced.update(r[0] for r in db.execute(f'SELECT DISTINCT "{column}" FROM "{table}"'))
    db.execute("CREATE TEMP TABLE kept(id INTEGER PRIMARY KEY)")
    db.executemany("INSERT INTO kept VALUES (?)", [(i,) for i in referenced if i is not None])
    db.execute("DELETE FROM StringIds WHERE id NOT IN (SELECT id FROM kept)")
    if "TARGET_INFO_GPU" in tables:  # the GPU's serial identity and bus address: not needed, not kept
        db.execute("UPDATE TARGET_INFO_GPU SET uuid = ''" + ("" if keep_gpu_bus else ", busLocation = ''"))
    for table in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if table in tables:  # absolute paths and the host name of the recording machine
            db.execute(f"UPDATE {table} SET value='[scrubbed]' WHERE name LIKE '%PATH%' OR name LIKE '%FILE%' "
                       "OR name IN ('EXPORT_HOST','EXPORT_USER')")
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("source")
    parser.add_argument("dest")
    parser.add_argument("--until")
    parser.add_argument("--from", dest="since")
    parser.add_argument("--keep-gpu-bus", action="store_true")
    parser.add_argument("--read-metrics-only", action="store_true")
    parser.add_argument("--samples-after-ranges", type=float)
    arguments = parser.parse_args()
    main(arguments.source, arguments.dest, arguments.until, arguments.keep_gpu_bus, arguments.since,
         arguments.read_metrics_only, arguments.samples_after_ranges)
