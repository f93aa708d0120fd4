#!/usr/bin/env python3
"""Writes tests/data/nsys-sqlite-stats/edges2022.sqlite: twoproc2022.sqlite (same folder) plus the cases of
nsys stats' rules that no recorded capture has, for nsys 2022.4's CSVs to decide (README.md there):
an unclosed range; a start/end range ended on another thread (in nvtx_sum, left out of the range tables); a
start/end range ended on its own thread that overlaps push/pop ranges; a range in a named domain nested in
another; a kernel launched outside every range; a kernel whose correlation id two calls carry (a runtime call
and the driver call beneath it); copies (host-to-device, unified) and a set, one copy without a launching call.
    python3 tests/tools/make_nsys_stats_edges_sqlite.py
"""
import pathlib
import shutil
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nsys-sqlite-stats"
RANK0_THREAD, RANK0_PROCESS = 16793993223, 16793993216  # globalTid / globalPid of twoproc2022's rank 0
OTHER_THREAD = RANK0_THREAD + 1


def main():
    target = DATA / "edges2022.sqlite"
    shutil.copyfile(DATA / "twoproc2022.sqlite", target)
    db = sqlite3.connect(target)
    db.executemany("INSERT INTO StringIds (id, value) VALUES (?, ?)",
                   [(4, "cudaMemcpyAsync_v3020"), (5, "cudaMemsetAsync_v3020"), (6, "cuLaunchKernel")])
    nvtx = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, endGlobalTid, domainId) VALUES (?,?,?,?,?,?,?)"
    db.executemany(nvtx, [
        (1300000, None, 59, "unclosed", RANK0_THREAD, None, 0),
        (1000000, 1300000, 60, "handoff", RANK0_THREAD, OTHER_THREAD, 0),
        (1000000, 1150000, 60, "window", RANK0_THREAD, None, 0),
        (999000, 999000, 75, "llm", RANK0_THREAD, None, 5),
        (1100500, 1150000, 59, "step", RANK0_THREAD, None, 5),
    ])
    runtime = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?,?,1,?,?,?,0)"
    db.executemany(runtime, [
        (1400000, 1402000, RANK0_THREAD, 100, 1),  # outside every closed range; inside "unclosed"
        (1001600, 1003000, RANK0_THREAD, 1, 6),    # the driver call beneath correlation id 1's runtime call
        (1101000, 1101500, RANK0_THREAD, 101, 4),
        (1111000, 1111500, RANK0_THREAD, 103, 5),
    ])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
               "globalPid, demangledName, shortName) VALUES (1405000, 1406000, 0, 1, 7, 100, ?, 10, 11)", (RANK0_PROCESS,))
    memcpy = ("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
              "bytes, copyKind) VALUES (?,?,0,1,7,?,?,4096,?)")
    db.executemany(memcpy, [(1102000, 1102500, 101, RANK0_PROCESS, 1), (1500000, 1500800, 102, RANK0_PROCESS, 11)])
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
               "globalPid, value, bytes) VALUES (1112000, 1112300, 0, 1, 7, 103, ?, 0, 4096)", (RANK0_PROCESS,))
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
