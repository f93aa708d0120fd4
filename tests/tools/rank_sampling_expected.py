#!/usr/bin/env python3
"""Independent expected figures for per-rank sampling (tests/unit/rank_sampling_test.cpp).

Two real captures of the 1b decode taken at once on one H200 by two processes (tests/data/gpu-metrics/ranks/):
rank 0's nsys sampled the GPU's metrics, rank 1's did not (only one nsys may sample a GPU). Rank 1's steps are
measured with rank 0's samples, moved onto rank 1's clock by the difference of the captures' clock origins
(TARGET_INFO_SESSION_START_TIME.utcEpochNs: sample time + origin(rank 0) - origin(rank 1)). Read with Python's
sqlite3, no code shared with libllmprof.

A step is one decode_step range instance; its GPU window runs from the first start to the last end of the kernels
whose launch call (same correlationId) started inside it on its thread. With the capture's own samples or another's,
a step counts only when its window lies inside [first sample time - 2 x period, last sample time + period] (the
samples cover (first - period, last], and a window may reach a period past either end: less than one sample
unsampled); the others are left out (counted). Rank 0's last step ends 0.29 ms after its trimmed export's last
sample, so it is left out of its own figures too. A sample at t reports (t - period, t] and
belongs to a window when t - period / 2 lies in it. Over the steps kept: samples, mean SM and tensor active, MBU
(mean (read + write) / 100) and DRAM bytes per step (sum of (read + write) / 100 x peak x period / steps); and for
each metric (SM, tensor, DRAM read, DRAM write) its mean and nearest-rank 10th, 50th and 90th percentiles, as a
stage's are (gpu_metrics_expected.py's nearest_rank).
Run from the repository root: python3 tests/tools/rank_sampling_expected.py
"""
import bisect
import collections
import pathlib
import sqlite3

from gpu_metrics_expected import nearest_rank

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "gpu-metrics" / "ranks"
METRICS = {"SMs Active [Throughput %]": "sm", "Tensor Active [Throughput %]": "tensor",
           "DRAM Read Bandwidth [Throughput %]": "read", "DRAM Write Bandwidth [Throughput %]": "write"}


def origin(db):
    return db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]


def samples_of(db, shift):
    names = {i: METRICS.get(n) for i, n in db.execute("SELECT metricId, metricName FROM TARGET_INFO_GPU_METRICS")}
    rows = collections.defaultdict(dict)
    for t, metric, value in db.execute("SELECT timestamp, metricId, value FROM GPU_METRICS"):
        if names.get(metric):
            rows[t + shift][names[metric]] = value
    times = sorted(rows)
    gaps = sorted(b - a for a, b in zip(times, times[1:]))
    peak = db.execute("SELECT memoryBandwidth FROM TARGET_INFO_GPU").fetchone()[0]
    return rows, times, gaps[len(gaps) // 2], peak


def step_windows(db, name="decode_step"):
    launch = {c: (s, tid) for c, s, tid in db.execute(
        "SELECT correlationId, start, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
    kernels = sorted((launch[c][0], launch[c][1], s, e) for s, e, c in
                     db.execute("SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL") if c in launch)
    starts = [k[0] for k in kernels]
    windows = []
    for start, end, tid in db.execute("SELECT e.start, e.end, e.globalTid FROM NVTX_EVENTS e LEFT JOIN StringIds s "
                                      "ON s.id = e.textId WHERE coalesce(e.text, s.value) = ? AND e.end IS NOT NULL",
                                      (name,)):
        inside = [k for k in kernels[bisect.bisect_left(starts, start):bisect.bisect_right(starts, end)] if k[1] == tid]
        windows.append((min(k[2] for k in inside), max(k[3] for k in inside)) if inside else (start, end))
    return windows


def measure(label, steps_db, samples_db, borrowed):
    shift = origin(samples_db) - origin(steps_db)
    rows, times, period, peak = samples_of(samples_db, shift)
    windows = step_windows(steps_db)
    # One rule for a capture's own samples and another's: a step counts only when the samples cover it, a period of
    # slack at either end (less than one sample unsampled).
    kept = [w for w in windows if w[0] >= times[0] - 2 * period and w[1] <= times[-1] + period]
    outside = len(windows) - len(kept)
    count, share, share_samples = 0, 0.0, 0
    values = {key: [] for key in METRICS.values()}
    for start, end in kept:
        for t in times[bisect.bisect_left(times, start + period // 2):]:
            if t - period // 2 > end:
                break
            count += 1
            row = rows[t]
            for key in values:
                if key in row:
                    values[key].append(row[key] / 100)
            if "read" in row and "write" in row:
                share += (row["read"] + row["write"]) / 100
                share_samples += 1
    sm, tensor = values["sm"], values["tensor"]
    percentiles = ""
    for key, metric in values.items():
        metric.sort()
        percentiles += f" {key}_p10={nearest_rank(metric, 0.10):.12g} {key}_p50={nearest_rank(metric, 0.50):.12g} " \
                       f"{key}_p90={nearest_rank(metric, 0.90):.12g}"
        if key in ("read", "write"):
            percentiles += f" {key}_mean={sum(metric) / len(metric):.12g}"
    print(f"{label}: shift_ns={shift} period_ns={period} steps={len(kept)} outside={outside} samples={count} "
          f"sm_mean={sum(sm) / len(sm):.12g} tensor_mean={sum(tensor) / len(tensor):.12g} "
          f"mbu={share / share_samples:.12g} bytes_per_step={share * peak * period * 1e-9 / len(kept):.10e}"
          + percentiles)


if __name__ == "__main__":
    r0 = sqlite3.connect(DATA / "r0_samples.sqlite")
    r1 = sqlite3.connect(DATA / "r1_shares_gpu.sqlite")
    measure("rank 0 (own samples)", r0, r0, borrowed=False)
    measure("rank 1 (rank 0's samples)", r1, r0, borrowed=True)
