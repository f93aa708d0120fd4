#!/usr/bin/env python3
"""Expected cross-rank figures of the two-H200 captures in tests/data/cross-rank/h200x2, computed here
from the SQLite rows with nothing of the C++ code.

The captures: `deep-profile run --launcher 'torchrun --nproc-per-node 2 --no-python'` of
`llmprof-decode --tensor-parallel --preset 1b --new-tokens 48` (NCCL, bf16), nsys 2025.3 gated on
`decode`, on 2026-11-23; `straggler-5ms` adds `--straggler-ms 5` (rank 1 sleeps 5 ms before each decode
step), `no-straggler` does not. Trimmed by trim_nsys_sqlite.py (--until decode_step:16).

Definitions (those of llmprof/cross_rank.hpp): a step starts when the first GPU work launched inside its
`decode_step` range (by a call on the range's thread) starts; each rank's time zero is the end of its
first collective (nccl*) kernel; a rank's lag at a step is its aligned start minus the earliest rank's;
the straggler has the largest mean lag; the step period is the median interval between the earliest
rank's consecutive aligned step starts. Writes tests/data/cross-rank/h200x2/expected.json, which
tests/unit/cross_rank_test.cpp reads; with --stdout it prints that file instead (ctest's "oracle:
cross_rank_h200_expected.py ..." compares the two, tests/cmake/oracles.cmake). Re-run after re-recording:
    python3 tests/tools/cross_rank_h200_expected.py
"""
import json
import pathlib
import sqlite3
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cross_rank_sqlite_fixture import step_figures  # noqa: E402  (lags, skew and period: one definition)

HERE = pathlib.Path(__file__).resolve().parents[1] / "data" / "cross-rank" / "h200x2"


def rank_rows(path):
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    ranges = [(s, e, t) for s, e, t, text, text_id in db.execute(
        "SELECT start, end, globalTid, text, textId FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL")
        if (text if text is not None else names.get(text_id)) == "decode_step"]
    launches = {c: (s, t) for s, t, c in db.execute(
        "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME")}
    kernels = [(s, e, c, names[n]) for s, e, c, n in db.execute(
        "SELECT start, end, correlationId, demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL")]
    return sorted(ranges), launches, kernels


def step_gpu_starts(ranges, launches, kernels):
    starts = []
    for start, end, thread in ranges:
        inside = [k[0] for k in kernels if k[2] in launches and launches[k[2]][1] == thread
                  and start <= launches[k[2]][0] <= end]
        if inside:
            starts.append(min(inside))
    return starts


def stage_collective_ns(ranges, launches, kernels):
    """Collective kernel time launched inside the ranges (the engine clips a GPU start before its launch)."""
    total = 0
    for start, end, corr, name in kernels:
        if not name.startswith("nccl") or corr not in launches:
            continue
        launch_start, thread = launches[corr]
        if any(s <= launch_start <= e and t == thread for s, e, t in ranges):
            total += end - max(start, launch_start)
    return total


def figures(run):
    aligned, per_rank = {}, {}
    for rank in (0, 1):
        ranges, launches, kernels = rank_rows(HERE / run / f"r{rank}.sqlite")
        collective = [k for k in kernels if k[3].startswith("nccl")]
        anchor = min(collective, key=lambda k: k[0])[1]
        aligned[rank] = sorted((s - anchor) / 1e6 for s in step_gpu_starts(ranges, launches, kernels) if s >= anchor)
        total = sum(k[1] - k[0] for k in kernels)
        per_rank[rank] = {"kernel_time_s": total * 1e-9,
                          "collective_share": sum(k[1] - k[0] for k in collective) / total,
                          "decode_step_collective_ns": stage_collective_ns(ranges, launches, kernels)}
    figures = step_figures(aligned)
    figures["ranks"] = per_rank
    return figures

if __name__ == "__main__":
    expected = {run: figures(run) for run in ("straggler-5ms", "no-straggler")}
    text = json.dumps(expected, indent=2, sort_keys=True) + "\n"
    if "--stdout" in sys.argv[1:]:  # what tests/tools/run_oracle.py compares with the committed file
        sys.stdout.write(text)
    else:
        (HERE / "expected.json").write_text(text)
        print(f"wrote {HERE / 'expected.json'}")
