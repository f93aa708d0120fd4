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
and return (many_steps.py --async-steps; lines "  real async cpu NAME:").
The reader's rules (llmprof/gpu_metrics.hpp), as this script applies them: a metric is read when its name starts
with one of the four above's and ends with "[Throughput %]"; a value that is not a number (typeof not integer or
real), lies outside 0..100, or repeats a metric at one time (rows in timestamp, rowid order; the first stands) is
left out and counted; a sample time is one with at least one value left. The samples are withheld when the export
sampled several GPUs (typeIds), when none of the four metrics is named, when any of them loses more than a tenth of
its values, or when fewer than nine in ten gaps between sample times lie within a quarter of the median gap. An
instance counts when its window lies inside the samples' span widened by a period at each end
([first - 2 x period, last + period]); a stage's samples are those in the union of its counted instances' windows (a
moment of overlapping instances counted once), and bytes per step are over the stage's instances scaled to the share
of those with a window that count. Then the hostile
copies of tests/data/gpu-metrics/doctored.tsv, each built with that file's SQL on a copy of its export, lines
"  doctored NAME ...". Run from the repository root:
    python3 tests/tools/gpu_metrics_expected.py
"""
import bisect
import collections
import math
import os
import pathlib
import shutil
import sqlite3
import tempfile

TESTS = pathlib.Path(__file__).resolve().parents[1] / "data"
DATA = TESTS / "gpu-metrics"
READ = {"SMs Active": "sm", "Tensor Active": "tensor", "DRAM Read Bandwidth": "read", "DRAM Write Bandwidth": "write"}
UNIT = "[Throughput %]"
MOST_LEFT_OUT = 0.10
# What tests/unit/gpu_metrics_test.cpp runs on its copy of nvtx_1b_h200_6steps.sqlite for the headline.
NVTX_DECODE_ENDED = ("UPDATE NVTX_EVENTS SET end = (SELECT max(end) FROM NVTX_EVENTS WHERE text = 'decode_step') "
                     "WHERE text = 'decode'")


def nearest_rank(values, fraction):
    rank = math.ceil(fraction * len(values))
    return values[min(len(values) - 1, max(rank, 1) - 1)]


def metric_of(name):
    for start, key in READ.items():
        if name.startswith(start) and name.endswith(UNIT):
            return key
    return None


def read_samples(db):
    """(rows, times, period, counts) or a string: why the samples are withheld."""
    types = [t for (t,) in db.execute("SELECT DISTINCT typeId FROM GPU_METRICS")]
    if len(types) > 1:
        return f"gpus={len(types)}"
    names = {i: metric_of(n) for i, n in db.execute("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
    if not any(names.values()):
        return "no_metric_read"
    rows = collections.defaultdict(dict)
    counts = collections.Counter()
    per_metric = collections.Counter()
    left_out = collections.Counter()
    for t, metric, value, kind in db.execute(
            "SELECT timestamp, metricId, value, typeof(value) FROM GPU_METRICS ORDER BY timestamp, rowid"):
        key = names.get(metric)
        if not key:
            continue
        per_metric[key] += 1
        if kind not in ("integer", "real"):
            counts["not_numbers"] += 1
            left_out[key] += 1
        elif not 0 <= value <= 100:
            counts["out_of_range"] += 1
            left_out[key] += 1
        elif key in rows[t]:
            counts["repeated"] += 1
            left_out[key] += 1
        else:
            rows[t][key] = value
    for key, lost in left_out.items():
        if lost > MOST_LEFT_OUT * per_metric[key]:
            return f"left_out_{key}={lost}/{per_metric[key]}"
    times = sorted(t for t in rows if rows[t])
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    period = gaps[len(gaps) // 2]
    regular = sum(1 for gap in gaps if abs(gap - period) <= period / 4)
    if regular < 0.9 * len(gaps):
        return f"irregular={regular}/{len(gaps)}"
    counts["values"] = sum(per_metric.values())
    return rows, times, period, counts


def main(name, label="", shorten=None, statements=None):
    """shorten: (range name, ns): that range's instances end that long after they start. statements: SQL run on a
    copy of the export first."""
    path = DATA / name
    if statements:
        directory = tempfile.mkdtemp()
        path = pathlib.Path(directory) / "doctored.sqlite"
        shutil.copyfile(TESTS / name, path)
        os.chmod(path, 0o644)
        db = sqlite3.connect(path)
        for statement in statements:
            db.execute(statement)
        db.commit()
    else:
        db = sqlite3.connect(path)
    read = read_samples(db)
    if isinstance(read, str):
        print(f"{(label or name).strip()}: withheld {read}")
        return
    rows, times, period, counts = read
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
    left = " ".join(f"{key}={counts[key]}" for key in ("values", "out_of_range", "not_numbers", "repeated"))
    if statements:
        print(f"{label.strip()}: period_ns={period} peak={peak} sample_times={len(times)} {left}")
    else:
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
    """(after_share, after_samples) of one range name's instances that the samples cover, over CPU windows."""
    bounds = collections.defaultdict(list)
    for instances in ranges.values():
        for start, end, tid in instances:
            bounds[tid].append(start)
    for tid in bounds:
        bounds[tid].sort()
    inside = after = 0.0
    after_samples = 0
    for start, end, tid in ranges[text]:
        if not covered((start, end), times, period):
            continue
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


def covered(window, times, period):
    return window[0] >= times[0] - 2 * period and window[1] <= times[-1] + period


def summarize(ranges, times, rows, period, peak, window_of, prefix, after=False):
    for text in sorted(ranges):
        values = collections.defaultdict(list)
        share, share_samples = 0.0, 0
        windows = [w for w in (window_of(*instance) for instance in ranges[text]) if w]
        kept = [w for w in windows if covered(w, times, period)]
        outside = len(windows) - len(kept)
        # A step per instance (as the test divides), scaled to the share of the instances with a window kept.
        steps = len(ranges[text]) * len(kept) / len(windows) if windows else 0
        # Each sample once, however the kept windows overlap.
        own = sorted({t for start, end in kept
                      for t in times[bisect.bisect_left(times, start + period // 2):bisect.bisect_right(times, end + period // 2)]})
        for t in own:
            for key, value in rows[t].items():
                values[key].append(value / 100)
            if "read" in rows[t] and "write" in rows[t]:
                share += (rows[t]["read"] + rows[t]["write"]) / 100
                share_samples += 1
        line = [f"{prefix}{text}: instances={len(ranges[text])} samples={len(own)}"]
        if outside:
            line.append(f"outside={outside}")
        for key in ("sm", "tensor", "read", "write"):
            v = sorted(values[key])
            if v:
                line.append(f"{key}_mean={sum(v) / len(v):.12g} {key}_p10={nearest_rank(v, 0.1):.4f} "
                            f"{key}_p50={nearest_rank(v, 0.5):.4f} {key}_p90={nearest_rank(v, 0.9):.4f}")
        if share_samples:
            line.append(f"mbu={share / share_samples:.12g} "
                        f"bytes_per_step={share * peak * period * 1e-9 / steps:.10e}")
        if after:
            share, after_samples = after_ranges(ranges, times, rows, period, text)
            line.append(f"after_share={share:.12g} after_samples={after_samples}" if share is not None
                        else f"after_share=none after_samples={after_samples}")
        if len(kept) >= 3 and len(own) >= 20:
            # The median step: the window at index n // 2 by length; its samples averaged in groups so that at
            # most 200 points remain (none where the median window holds no sample).
            gpu_start, gpu_end = sorted(kept, key=lambda w: (w[1] - w[0], w))[len(kept) // 2]
            median = [t for t in times if gpu_start <= t - period // 2 <= gpu_end]
        else:
            median = []
        if median:
            group = -(-len(median) // 200)
            chunks = [median[i:i + group] for i in range(0, len(median), group)]
            first_sm = sum(rows[t]["sm"] for t in chunks[0]) / len(chunks[0]) / 100
            line.append(f"median_step_samples={len(median)} median_step_points={len(chunks)} "
                        f"median_step_first_sm={first_sm:.12g}")
        print(" ".join(line))


def doctored():
    for line in (DATA / "doctored.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, base, sql = line.split("\t")
        main(base, f"doctored {name} ", statements=[s.strip() for s in sql.split(" ; ")])


if __name__ == "__main__":
    main("eager_1b_h200_6steps.sqlite")
    main("nvtx_1b_h200_6steps.sqlite", "nvtx ")
    # The trimmed capture keeps the whole decode range (to the run's end, 1.4 s) but samples only its first 6 steps
    # (90 ms): the same capture with the range ending with its sixth step, as a capture of those steps alone would.
    main("gpu-metrics/nvtx_1b_h200_6steps.sqlite", "nvtx ended ", statements=[NVTX_DECODE_ENDED])
    main("../zoo/many_steps_graph_sampled.sqlite", "graph ")
    main("../zoo/many_steps_graph_sampled.sqlite", "async ", shorten=("decode_step", 15000))
    main("../zoo/many_steps_graph_async_sampled.sqlite", "real async ")
    doctored()
