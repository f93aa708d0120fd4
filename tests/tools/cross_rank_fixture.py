#!/usr/bin/env python3
"""Writes the two-rank fixture of tests/unit/cross_rank_test.cpp and the figures it must give.

tests/data/cross-rank/r<k>/summary_{nvtx_pushpop_trace,cuda_gpu_trace,cuda_gpu_kern_sum}.csv in the
column layout of `nsys stats --format csv` (2025.3), and expected.json, computed here independently
of the C++ code. Rank 1's clock is 7 s ahead of rank 0's (different hosts), so raw timestamps are
useless; rank 1 starts each decode step 2, 3, 4, 5 ms after rank 0 once both are aligned on the end
of their first 'prefill' range; each all-reduce ends on both ranks when the later one joins, so the
end of the first is their common time zero. Re-run after changing it: python3 tests/tools/cross_rank_fixture.py
"""
import json
import os
import statistics

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "cross-rank")
MS = 1_000_000
CLOCK_OFFSET = {0: 1_000 * MS, 1: 8_000 * MS}
PREFILL_END = 50 * MS                    # after each rank's own clock origin
STEP_LAG = {0: [0, 0, 0, 0], 1: [2 * MS, 3 * MS, 4 * MS, 5 * MS]}
STEP_PERIOD = 20 * MS


def ranges(rank):
    base = CLOCK_OFFSET[rank]
    rows = [(base + 10 * MS, base + PREFILL_END, ":prefill")]
    for step in range(4):
        start = base + PREFILL_END + 1 * MS + step * STEP_PERIOD + STEP_LAG[rank][step]
        rows.append((start, start + 15 * MS, ":decode_step"))
    rows.append((base + PREFILL_END, base + PREFILL_END + 90 * MS, ":decode"))
    return rows


def kernels(rank):
    """(start, duration, name, stream): per step a GEMM then an all-reduce that half overlaps the next GEMM."""
    base = CLOCK_OFFSET[rank]
    rows = []
    for step in range(4):
        t = base + PREFILL_END + 2 * MS + step * STEP_PERIOD + STEP_LAG[rank][step]
        rows.append((t, 4 * MS, "ampere_sgemm_128x64_tn", 7))
        # The all-reduce ends when the later rank joins it: at the same moment (real time) on both ranks.
        last = base + PREFILL_END + 2 * MS + step * STEP_PERIOD + max(STEP_LAG[r][step] for r in STEP_LAG) + 6 * MS
        rows.append((t + 4 * MS, last - (t + 4 * MS), "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 13))
        rows.append((t + 5 * MS, (3 + rank) * MS, "ampere_sgemm_64x64_nn", 7))
    rows.append((base + 11 * MS, MS // 2, "[CUDA memcpy Host-to-Device]", 7))
    return rows


def merged(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def expected():
    figures = {}
    aligned = {}
    for rank in (0, 1):
        ks = [k for k in kernels(rank) if not k[2].startswith("[")]
        total = sum(k[1] for k in ks)
        nccl = sum(k[1] for k in ks if "nccl" in k[2].lower())
        compute = merged([(k[0], k[0] + k[1]) for k in ks if "nccl" not in k[2].lower()])
        comm = merged([(k[0], k[0] + k[1]) for k in ks if "nccl" in k[2].lower()])
        overlapped = sum(max(0, min(e, ce) - max(s, cs)) for s, e in comm for cs, ce in compute)
        # Time zero: the end of the rank's first collective kernel, the same moment on every rank.
        anchor = min((k for k in ks if "nccl" in k[2].lower()), key=lambda k: k[0])
        anchor = anchor[0] + anchor[1]
        aligned[rank] = sorted((r[0] - anchor) / MS for r in ranges(rank) if r[2] == ":decode_step" and r[0] >= anchor)
        figures[rank] = {"kernel_time_s": total * 1e-9, "collective_share": nccl / total,
                         "comm_compute_overlap": overlapped / sum(e - s for s, e in comm)}
    steps = min(len(a) for a in aligned.values())
    lags = {0: 0.0, 1: 0.0}
    skews = []
    for i in range(steps):
        at = [aligned[r][i] for r in (0, 1)]
        earliest = min(at)
        for r in (0, 1):
            lags[r] += aligned[r][i] - earliest
        skews.append(max(at) - min(at))
    straggler = max(lags, key=lambda r: lags[r])
    return {"ranks": figures, "straggler": straggler, "straggler_lag_ms": lags[straggler] / steps,
            "skew_median_ms": statistics.median(skews), "skew_max_ms": max(skews), "steps": steps,
            "kernel_time_max_rank": max(figures, key=lambda r: figures[r]["kernel_time_s"]),
            "kernel_time_imbalance": max(f["kernel_time_s"] for f in figures.values()) /
            statistics.median([f["kernel_time_s"] for f in figures.values()])}


def write(rank):
    directory = os.path.join(HERE, f"r{rank}")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "summary_nvtx_pushpop_trace.csv"), "w") as out:
        out.write("Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTid\n")
        for i, (s, e, name) in enumerate(sorted(ranges(rank))):
            out.write(f"{s},{e},{e - s},0,{e - s},{name},4242,4242,0,0,{i + 1},,:{i + 1},{name[1:]}\n")
    with open(os.path.join(directory, "summary_cuda_gpu_trace.csv"), "w") as out:
        out.write("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DynSMem (MB),Bytes (MB),"
                  "Throughput (MB/s),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n")
        for i, (s, d, name, stream) in enumerate(sorted(kernels(rank))):
            quoted = f'"{name}"' if "," in name else name
            out.write(f"{s},{d},{i + 100},1,1,1,128,1,1,32,0.000,0.000,,,,,0,1,,{stream},{quoted}\n")
    totals = {}
    for s, d, name, _ in kernels(rank):
        if not name.startswith("["):
            totals.setdefault(name, []).append(d)
    grand = sum(sum(v) for v in totals.values())
    with open(os.path.join(directory, "summary_cuda_gpu_kern_sum.csv"), "w") as out:
        out.write("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n")
        for name, ds in sorted(totals.items(), key=lambda kv: -sum(kv[1])):
            quoted = f'"{name}"' if "," in name else name
            out.write(f"{100.0 * sum(ds) / grand:.1f},{sum(ds)},{len(ds)},{statistics.mean(ds):.1f},{statistics.median(ds):.1f},"
                      f"{min(ds)},{max(ds)},{statistics.pstdev(ds):.1f},{quoted}\n")


if __name__ == "__main__":
    for rank in (0, 1):
        write(rank)
    with open(os.path.join(HERE, "expected.json"), "w") as out:
        json.dump(expected(), out, indent=2, sort_keys=True)
        out.write("\n")
