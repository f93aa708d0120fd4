#!/usr/bin/env python3
"""How far the clock origins put one capture from another, checked against the GPU's own counters.

Two processes profiled at once on one GPU, the first with GPU-metrics sampling (SAMPLER.sqlite) and the second
without (OTHER.sqlite), both exported with nsys 2025.3.1. The samples' SM activity, in 200 us bins, minus what the
sampler's own kernels explain (least squares), is correlated with the other capture's kernel busy time moved by
each lag in a window; the best lag is printed beside the lag the clock origins give
(TARGET_INFO_SESSION_START_TIME.utcEpochNs: other's - sampler's) and the one ANALYSIS_DETAILS.startTime would add.
Pure Python (no numpy on the recording machine's system Python); about 10 s for two 2 s captures.

Usage: rank_clock_offset.py SAMPLER.sqlite OTHER.sqlite [FROM_MS TO_MS]
(default window: the origins' lag +- 600 ms; decode steps repeat every few ms, so the correlation has a peak at
every whole number of steps and only the highest one within the window means anything)
Measured on the H200 (2026-11-29, the 1b decode with 120 tokens in each process): best lag -433.66 ms, clock
origins -433.42 ms; with startTime -162.5 ms. The trimmed fixtures of tests/data/gpu-metrics/ranks/ overlap for
too short a time for the correlation to find the lag.
"""
import math
import sqlite3
import sys

CELL = 10_000  # ns
PER_BIN = 20   # cells per 200 us bin
BIN = CELL * PER_BIN


def kernels(db):
    return db.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start").fetchall()


def busy_prefix(intervals, low_cell, cells):
    """Prefix sums of a 0/1 busy grid of `cells` cells of CELL ns from cell `low_cell`."""
    difference = [0] * (cells + 2)
    for start, end in intervals:
        first, last = start // CELL - low_cell, end // CELL - low_cell
        if 0 <= first and last < cells:
            difference[first] += 1
            difference[last + 1] -= 1
    prefix, running, total = [0], 0, 0
    for cell in range(cells):
        running += difference[cell]
        total += 1 if running > 0 else 0
        prefix.append(total)
    return prefix


def binned(prefix, low_cell, lag_cells, bins):
    """Busy share of each bin of the sampler's clock, the other capture's cells moved by lag_cells."""
    out, size = [], len(prefix) - 1
    for index in range(bins):
        first = max(0, min(size, index * PER_BIN - lag_cells - low_cell))
        last = max(0, min(size, first + PER_BIN))
        out.append((prefix[last] - prefix[first]) / PER_BIN)
    return out


def correlation(a, b):
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    cross = sum((x - mean_a) * (y - mean_b) for x, y in zip(a, b))
    spread = math.sqrt(sum((x - mean_a) ** 2 for x in a) * sum((y - mean_b) ** 2 for y in b))
    return cross / spread if spread > 0 else 0.0


def main(sampler_file, other_file, low_ms=None, high_ms=None):
    sampler, other = sqlite3.connect(sampler_file), sqlite3.connect(other_file)
    origin = lambda db: db.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    start = lambda db: db.execute("SELECT startTime FROM ANALYSIS_DETAILS").fetchone()[0]
    by_origins = (origin(other) - origin(sampler)) / 1e6
    with_start = (origin(other) + start(other) - origin(sampler) - start(sampler)) / 1e6
    if low_ms is None:
        low_ms, high_ms = round(by_origins) - 600, round(by_origins) + 600
    metric = sampler.execute("SELECT metricId FROM TARGET_INFO_GPU_METRICS WHERE metricName LIKE 'SMs Active%'").fetchone()[0]
    samples = sampler.execute("SELECT timestamp, value FROM GPU_METRICS WHERE metricId = ? AND timestamp >= 0 "
                              "ORDER BY timestamp", (metric,)).fetchall()
    bins = samples[-1][0] // BIN
    sums, counts = [0.0] * bins, [0] * bins
    for time, value in samples:
        if time // BIN < bins:
            sums[time // BIN] += value
            counts[time // BIN] += 1
    activity = [total / max(1, count) for total, count in zip(sums, counts)]
    own = binned(busy_prefix(kernels(sampler), 0, bins * PER_BIN + 10), 0, 0, bins)
    mean_own, mean_activity = sum(own) / bins, sum(activity) / bins
    slope = sum((x - mean_own) * (y - mean_activity) for x, y in zip(own, activity)) / \
        max(1e-12, sum((x - mean_own) ** 2 for x in own))
    residual = [y - slope * x for x, y in zip(own, activity)]
    low_cell = min(-100_000, (low_ms - 1000) * 100)
    prefix = busy_prefix(kernels(other), low_cell, 400_000 - low_cell)
    coarse = max((correlation(residual, binned(prefix, low_cell, lag * 100, bins)), lag)
                 for lag in range(low_ms, high_ms + 1))
    fine = max((correlation(residual, binned(prefix, low_cell, lag, bins)), lag / 100)
               for lag in range(coarse[1] * 100 - 300, coarse[1] * 100 + 301, 2))
    at_origins = correlation(residual, binned(prefix, low_cell, round(by_origins * 100), bins))
    print(f"window {low_ms}..{high_ms} ms: best lag {fine[1]:.2f} ms (correlation {fine[0]:.3f}); clock origins {by_origins:.2f} ms; "
          f"(correlation there {at_origins:.3f}); origins plus ANALYSIS_DETAILS.startTime {with_start:.2f} ms")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], *(int(v) for v in sys.argv[3:]))
