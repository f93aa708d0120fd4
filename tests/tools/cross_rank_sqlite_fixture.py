#!/usr/bin/env python3
"""Writes the two-rank SQLite fixture of tests/unit/cross_rank_test.cpp and the figures it must give.

tests/data/cross-rank/sqlite/r<k>.sqlite in the nsys 2025.3 export shape (tables from
make_two_process_sqlite.py) and expected.json, computed here independently of the C++ code.
The two ranks disagree on the CPU and the GPU, as a decode loop that does not wait for its GPU does:
- rank 0 waits for its GPU each step, so its step ranges open 20 ms apart, on time;
- rank 1 launches every step within a few hundred microseconds (its CPU runs ahead of its GPU), but its
  GPU work starts 2, 3, 4, 5 ms after rank 0's (it is the straggler).
Each all-reduce ends on both ranks when the later one joins it, so the end of the first is the ranks'
common time zero. Compared on the CPU, rank 0 would be called the straggler; on the GPU, rank 1 with
the mean of its lags over the steps after that all-reduce (4 ms).
Rank 1's clock is 7 s ahead (another host). Re-run after changing it:
    python3 tests/tools/cross_rank_sqlite_fixture.py
"""
import json
import pathlib
import sqlite3
import statistics
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_two_process_sqlite import create  # noqa: E402  (the export's tables, one definition)
from cross_rank_fixture import merged  # noqa: E402  (interval union, one definition)

HERE = pathlib.Path(__file__).resolve().parents[1] / "data" / "cross-rank" / "sqlite"
MS = 1_000_000
US = 1_000
CLOCK_OFFSET = {0: 1_000 * MS, 1: 8_000 * MS}
STEPS = 4
GPU_LAG = {0: [0] * STEPS, 1: [2 * MS, 3 * MS, 4 * MS, 5 * MS]}
STRINGS = {1: "cudaLaunchKernel_v7000", 2: "cudaStreamSynchronize_v3020",
           20: "ampere_bf16_s16816gemm_bf16_128x64_tn", 21: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           22: "flash_fwd_kernel"}


def layout(rank):
    """(ranges, launches): ranges as (start, end, name); launches as (call start, gpu start, gpu end, name id, stream)."""
    base = CLOCK_OFFSET[rank]
    ranges = [(base + 10 * MS, base + 50 * MS, "prefill")]
    launches = [(base + 11 * MS, base + 12 * MS, base + 49 * MS, 20, 7)]  # prefill ends after its GPU work
    for step in range(STEPS):
        gpu = base + 51 * MS + step * 20 * MS + GPU_LAG[rank][step] + 500 * US
        # The all-reduce ends when the later rank's joins it, on both ranks at once (in real time).
        reduce_end = base + 51 * MS + step * 20 * MS + max(GPU_LAG[r][step] for r in GPU_LAG) + 500 * US + 6 * MS
        if rank == 0:
            cpu = base + 51 * MS + step * 20 * MS           # waits for the GPU: on time
            end = cpu + 19 * MS
        else:
            cpu = base + 50 * MS + 200 * US + step * 300 * US  # runs ahead of its GPU
            end = cpu + 250 * US
        ranges.append((cpu, end, "decode_step"))
        call = cpu + 20 * US
        launches.append((call, gpu, gpu + 4 * MS, 20, 7))                       # GEMM
        launches.append((call + 10 * US, gpu + 4 * MS, reduce_end, 21, 13))    # all-reduce
        launches.append((call + 20 * US, gpu + 5 * MS, gpu + (8 + rank) * MS, 22, 7))  # overlaps the all-reduce
    ranges.append((base + 50 * MS, base + 140 * MS, "decode"))
    return ranges, launches


def write(rank):
    path = HERE / f"r{rank}.sqlite"
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    create(db, "2025")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", STRINGS.items())
    global_pid = (4242 + rank) << 24
    tid = global_pid | 7
    ranges, launches = layout(rank)
    for start, end, name in ranges:
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?, ?, 59, ?, ?, 0)",
                   (start, end, name, tid))
    for corr, (call, gpu_start, gpu_end, name, stream) in enumerate(launches, start=1):
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, 1, 0, NULL)", (call, call + 5 * US, tid, corr))
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, ?, ?, ?, ?, ?, NULL)",
                   (gpu_start, gpu_end, stream, corr, global_pid, name, name))
    db.commit()
    db.close()


def step_figures(starts):
    """Lags, skew, straggler and step period from each rank's aligned step starts (ms)."""
    steps = min(len(s) for s in starts.values())
    lags = {r: 0.0 for r in starts}
    skews = []
    for i in range(steps):
        at = {r: starts[r][i] for r in starts}
        for r in starts:
            lags[r] += at[r] - min(at.values())
        skews.append(max(at.values()) - min(at.values()))
    straggler = max(lags, key=lambda r: lags[r])
    earliest = min(starts, key=lambda r: lags[r])
    period = statistics.median(b - a for a, b in zip(starts[earliest][:steps], starts[earliest][1:steps]))
    return {"straggler": straggler, "straggler_lag_ms": lags[straggler] / steps,
            "skew_median_ms": statistics.median(skews), "skew_max_ms": max(skews), "steps": steps,
            "step_period_ms": period}


def expected():
    gpu_starts, cpu_starts, figures = {}, {}, {}
    for rank in (0, 1):
        ranges, launches = layout(rank)

        def launched_in(r):
            return [l for l in launches if r[0] <= l[0] <= r[1]]

        prefill = next(r for r in ranges if r[2] == "prefill")
        steps = sorted(r for r in ranges if r[2] == "decode_step")
        # Time zero: the end of the rank's first collective kernel (the same moment on every rank).
        anchor = min((l for l in launches if STRINGS[l[3]].startswith("nccl")), key=lambda l: l[1])[2]
        gpu_starts[rank] = [(min(l[1] for l in launched_in(s)) - anchor) / MS for s in steps
                            if min(l[1] for l in launched_in(s)) >= anchor]
        # A rank without kernels (CPU only) has no collective to align on: the CPU starts, aligned on the
        # end of prefill.
        cpu_starts[rank] = [(s[0] - prefill[1]) / MS for s in steps]
        total = sum(l[2] - l[1] for l in launches)
        nccl = sum(l[2] - l[1] for l in launches if STRINGS[l[3]].startswith("nccl"))
        comm = merged([(l[1], l[2]) for l in launches if STRINGS[l[3]].startswith("nccl")])
        compute = merged([(l[1], l[2]) for l in launches if not STRINGS[l[3]].startswith("nccl")])
        overlapped = sum(max(0, min(e, ce) - max(s, cs)) for s, e in comm for cs, ce in compute)
        figures[rank] = {"kernel_time_s": total * 1e-9, "collective_share": nccl / total,
                         "comm_compute_overlap": overlapped / sum(e - s for s, e in comm)}
    return {"ranks": figures, "gpu": step_figures(gpu_starts), "cpu": step_figures(cpu_starts)}


if __name__ == "__main__":
    HERE.mkdir(parents=True, exist_ok=True)
    for rank in (0, 1):
        write(rank)
    with open(HERE / "expected.json", "w") as out:
        json.dump(expected(), out, indent=2, sort_keys=True)
        out.write("\n")
    print(f"wrote {HERE}")
