#!/usr/bin/env python3
"""Writes two small synthetic nsys SQLite exports of a capture with two processes (two ranks) that
reuse the same CUDA correlation ids, one per schema the timeline engine reads:
    tests/data/nsys-sqlite/twoproc2022.sqlite  nsys 2022.4 shape (EXPORT_META_DATA, schema 3.0.0)
    tests/data/nsys-sqlite/twoproc2025.sqlite  nsys 2025.3 shape (META_DATA_EXPORT, 3.20.3, graph trace)
Correlation ids are per process in CUPTI, so a join on the id alone pairs a kernel with the other
process's launch. The rows are laid out to make that visible: rank 1 launches every id a little before
rank 0 does (a join on the id alone, keeping the earliest launch, hands rank 0's kernels to rank 1),
the kernels of each rank have their own names and durations, and rank 1's last launches have no GPU
record while rank 0's launches of the same ids do (a loss that a join on the id alone cannot see).
Column sets are those `nsys export --type sqlite --lazy=false` writes (2022.4.2.1 checked here; 2025.3
from the H100 fixtures). Re-run after editing, then tests/tools/timeline_expected.py:
    python3 tests/tools/make_two_process_sqlite.py
"""
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nsys-sqlite"
STRINGS = {1: "cudaLaunchKernel_v7000", 2: "cudaStreamSynchronize_v3020", 3: "cudaGraphLaunch_v10000",
           10: "rank0_kernel(float*)", 11: "rank0_kernel", 12: "rank1_kernel(float*)", 13: "rank1_kernel"}
# (process id, range name, kernel name id, kernel duration ns, CPU offset ns, launches with a GPU record)
RANKS = [(1001, "rank0_step", 10, 3000, 400, 4), (1002, "rank1_step", 12, 7000, 0, 2)]
STEPS, LAUNCHES = 3, 4  # per rank: 3 step ranges of 4 launches each, correlation ids 1..12


def create(db, schema):
    nvtx = ("start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, "
            "color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
            "uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
            "floatValue REAL, jsonTextId INTEGER, jsonText TEXT")
    activity = ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
                "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER")
    db.executescript(f"""
        CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE NVTX_EVENTS ({nvtx});
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
            returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({activity}, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, graphNodeId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY ({activity}, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
            graphNodeId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET ({activity}, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
            graphNodeId INTEGER);
    """)
    if schema == "2025":
        db.execute(f"CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE ({activity}, graphId INTEGER NOT NULL, "
                   "graphExecId INTEGER NOT NULL)")
        db.execute("CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT)")
        meta = [("EXPORT_PRODUCT_VERSION", "2025.3.2.0"), ("EXPORT_SCHEMA_VERSION", "3.20.3")]
        db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", meta)
    else:
        db.execute("CREATE TABLE EXPORT_META_DATA (name TEXT NOT NULL, value TEXT)")
        meta = [("EXPORT_PRODUCT_VERSION", "2022.4.2.1"), ("EXPORT_SCHEMA_VERSION", "3.0.0")]
        db.executemany("INSERT INTO EXPORT_META_DATA VALUES (?, ?)", meta)


def fill(db, schema):
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", STRINGS.items())
    for pid, name, kernel, duration, offset, recorded in RANKS:
        global_pid = pid << 24
        tid = global_pid | 7
        for step in range(STEPS):
            begin = 1_000_000 + step * 100_000 + offset
            db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                       "VALUES (?, ?, 59, ?, ?, 0)", (begin, begin + 60_000, name, tid))
            for launch in range(LAUNCHES):
                corr = step * LAUNCHES + launch + 1
                call = begin + 1_000 + launch * 10_000
                graph = schema == "2025" and launch == LAUNCHES - 1  # the step's last launch is a graph
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                           (call, call + 2_000, tid, corr, 3 if graph else 1))
                if step == STEPS - 1 and launch >= recorded:
                    continue  # no GPU record: the capture ended first
                gpu = call + 5_000
                if graph:
                    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, 0, 1, 7, ?, ?, 1, 2)",
                               (gpu, gpu + 2 * duration, corr, global_pid))
                else:
                    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, 7, ?, ?, ?, ?, NULL)",
                               (gpu, gpu + duration, corr, global_pid, kernel, kernel + 1))
            sync = begin + 50_000
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 2, 0, NULL)",
                       (sync, sync + 8_000, tid, 1000 + step))


def main():
    for schema in ("2022", "2025"):
        path = DATA / f"twoproc{schema}.sqlite"
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path)
        create(db, schema)
        fill(db, schema)
        db.commit()
        db.close()
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
