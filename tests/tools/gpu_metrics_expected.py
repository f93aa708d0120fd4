#!/usr/bin/env python3
"""Independent expected figures for the sampled utilisation (tests/unit/gpu_metrics_test.cpp).

Reads a recorded nsys 2025.3.1 export with GPU-metrics samples with Python's sqlite3 (no code shared with
libllmprof). A range instance's GPU window: the first start to the last end of the kernels whose launch call
(CUPTI_ACTIVITY_KIND_RUNTIME, same correlationId) started inside the instance on its thread. A sample at time t
reports the period (t - period, t]; it belongs to a window when t - period / 2 lies in it. Per range name:
samples, mean and nearest-rank p10/p50/p90 of SM active, tensor active, DRAM read and write (fractions of
peak); DRAM bytes = sum over the samples of (read + write) / 100 x peak (TARGET_INFO_GPU.memoryBandwidth) x
period, per step = over the range's instances; MBU = mean (read + write) / 100. Then the same with each instance's
CPU window (its NVTX start to end) for every instance, as for a capture that traced no CUDA work (nsys.trace
without "cuda": the sampled preset), lines "  cpu NAME:"; and those of nvtx_1b_h200_6steps.sqlite, a real capture
of the sampled preset (nsys --trace=nvtx, no CUDA rows), lines "  nvtx cpu NAME:". Over CPU windows also the GPU
activity after the ranges: per instance, SM active (percent) summed over the samples whose period's middle lies in
(its end, the next start of any NVTX range on its thread, or the last sample where none follows], against
the same sum inside it: after_share = after / (inside + after), after_samples = the samples after. Then
tests/data/zoo/many_steps_graph_sampled.sqlite, a real capture of nsys --trace=nvtx with samples on the H100 of a
`decode` range holding 48 `decode_step` ranges, each replaying a CUDA graph and waiting for its token (lines
"  graph cpu NAME:"); and the same capture with each `decode_step` ending 15 us after it starts, as the 1b example's
--cuda-graphs steps did, which launch their graph and return (lines "  async cpu NAME:"); and
tests/data/zoo/many_steps_graph_async_sampled.sqlite, the same decode recorded with steps that launch their graph
and return (many_steps.py --async-steps; lines "  real async cpu NAME:"). Run from the repository
root:
    python3 tests/tools/gpu_metrics_expected.py
"""
import bisect
import collections
import math
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "gpu-metrics"
METRICS = {"SMs Active [Throughput %]": "sm", "Tensor Active [Throughput %]": "tensor",
           "DRAM Read Bandwidth [Throughput %]": "read", "DRAM Write Bandwidth [Throughput %]": "write"}


def nearest_rank(values, fraction):
    rank = math.ceil(fraction * len(values))
    return values[min(len(values) - 1, max(rank, 1) - 1)]


def main(name, label="", shorten=None):
    """shorten: (range name, ns): that range's instances end that long after they start."""
    db = sqlite3.connect(DATA / name)
    names = {i: METRICS.get(n) for i, n in db.execute("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
    rows = collections.defaultdict(dict)
    for t, metric, value in db.execute("SELECT timestamp, metricId, value FROM GPU_METRICS ORDER BY timestamp"):
        if names.get(metric):
            rows[t][names[metric]] = value
    times = sorted(rows)
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    period = gaps[len(gaps) // 2]
    peak = db.execute("SELECT memoryBandwidth FROM TARGET_INFO_GPU").fetchone()[0]
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    traced = "CUPTI_ACTIVITY_KIND_RUNTIME" in tables  # an export of nsys --trace=nvtx has no CUDA rows
    launch = {c: (s, tid) for c, s, tid in db.execute(
        "SELECT correlationId, start, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME")} if traced else {}
    kernels = []
    for start, end, correlation in (db.execute("SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL")
                                    if traced else []):
        if correlation in launch:
            kernels.append((launch[correlation][0], launch[correlation][1], start, end))
    kernels.sort()
    starts = [k[0] for k in kernels]
    ranges = collections.defaultdict(list)
    for text, start, end, tid in db.execute(
            "SELECT text, start, end, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL AND text IS NOT NULL"):
        ranges[text].append((start, end, tid))
    if shorten:
        ranges[shorten[0]] = [(start, start + shorten[1], tid) for start, _, tid in ranges[shorten[0]]]
    print(f"{name}: period_ns={period} peak={peak} sample_times={len(times)}")

    def gpu_window(start, end, tid):
        inside = [k for k in kernels[bisect.bisect_left(starts, start):bisect.bisect_right(starts, end)] if k[1] == tid]
        return (min(k[2] for k in inside), max(k[3] for k in inside)) if inside else None

    if traced:
        summarize(ranges, times, rows, period, peak, gpu_window, f"  {label}")
    summarize(ranges, times, rows, period, peak, lambda start, end, tid: (start, end), f"  {label}cpu ", after=True)


def activity(row):
    return row["sm"] if "sm" in row else row.get("read", 0) + row.get("write", 0)


def after_ranges(ranges, times, rows, period, text):
    """(after_share, after_samples) of one range name, over CPU windows."""
    bounds = collections.defaultdict(list)
    for instances in ranges.values():
        for start, end, tid in instances:
            bounds[tid].append(start)
    for tid in bounds:
        bounds[tid].sort()
    inside = after = 0.0
    after_samples = 0
    for start, end, tid in ranges[text]:
        following = [b for b in bounds[tid] if b > end]
        until = following[0] if following else times[-1]
        for t in times:
            middle = t - period // 2
            if start <= middle <= end:
                inside += activity(rows[t])
            elif end < middle <= until:
                after += activity(rows[t])
                after_samples += 1
    return (after / (inside + after) if inside + after > 0 else None), after_samples


def summarize(ranges, times, rows, period, peak, window_of, prefix, after=False):
    for text in sorted(ranges):
        values = collections.defaultdict(list)
        share, share_samples, samples = 0.0, 0, 0
        windows = []
        for start, end, tid in ranges[text]:
            window = window_of(start, end, tid)
            if not window:
                continue
            gpu_start, gpu_end = window
            windows.append((gpu_end - gpu_start, gpu_start, gpu_end))
            for t in times[bisect.bisect_left(times, gpu_start + period // 2):]:
                if t - period // 2 > gpu_end:
                    break
                samples += 1
                for key, value in rows[t].items():
                    values[key].append(value / 100)
                if "read" in rows[t] and "write" in rows[t]:
                    share += (rows[t]["read"] + rows[t]["write"]) / 100
                    share_samples += 1
        line = [f"{prefix}{text}: instances={len(ranges[text])} samples={samples}"]
        for key in ("sm", "tensor", "read", "write"):
            v = sorted(values[key])
            if v:
                line.append(f"{key}_mean={sum(v) / len(v):.12g} {key}_p10={nearest_rank(v, 0.1):.4f} "
                            f"{key}_p50={nearest_rank(v, 0.5):.4f} {key}_p90={nearest_rank(v, 0.9):.4f}")
        if share_samples:
            line.append(f"mbu={share / share_samples:.12g} "
                        f"bytes_per_step={share * peak * period * 1e-9 / len(ranges[text]):.10e}")
        if after:
            share, after_samples = after_ranges(ranges, times, rows, period, text)
            line.append(f"after_share={share:.12g} after_samples={after_samples}" if share is not None
                        else f"after_share=none after_samples={after_samples}")
        if len(windows) >= 3 and samples >= 20:
            # The median step: the window at index n // 2 by length; its samples averaged in groups so that at
            # most 200 points remain (none where the median window holds no sample).
            _, gpu_start, gpu_end = sorted(windows)[len(windows) // 2]
            own = [t for t in times if gpu_start <= t - period // 2 <= gpu_end]
        else:
            own = []
        if own:
            group = -(-len(own) // 200)
            chunks = [own[i:i + group] for i in range(0, len(own), group)]
            first_sm = sum(rows[t]["sm"] for t in chunks[0]) / len(chunks[0]) / 100
            line.append(f"median_step_samples={len(own)} median_step_points={len(chunks)} "
                        f"median_step_first_sm={first_sm:.12g}")
        print(" ".join(line))


if __name__ == "__main__":
    main("eager_1b_h200_6steps.sqlite")
    main("nvtx_1b_h200_6steps.sqlite", "nvtx ")
    main("../zoo/many_steps_graph_sampled.sqlite", "graph ")
    main("../zoo/many_steps_graph_sampled.sqlite", "async ", shorten=("decode_step", 15000))
    main("../zoo/many_steps_graph_async_sampled.sqlite", "real async ")
