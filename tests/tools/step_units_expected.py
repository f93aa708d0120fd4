#!/usr/bin/env python3
"""What one step of each stage is, from recorded nsys SQLite exports, with nothing of libllmprof: the figures
tests/unit/step_units_test.cpp expects (tests/data/oracles/step_units.txt). Each export is one shape of step:

  graph-ranges   a `decode` range holding 48 `decode_step` ranges, one CUDA graph replay each, beside a `prefill`
                 (tests/data/zoo: the H100 zoo's many_steps.py, traced per graph node)
  graph-launches the same workload without step ranges: `decode` holds 32 graph replays
  inferred       the same workload eager and without step ranges: `decode` holds 16 forward passes, each ending in a
                 device-to-host copy, and the `prefill` beside it one more
  eager          a `decode` range holding 64 `decode_step` ranges, eager (tests/data/nsys-sqlite)
  graph-steps    the same model under CUDA graphs traced per node: 64 `decode_step` ranges, one graph launch each
  serving        the H100 serving window: each `scheduler_step`, `decode_batch` and `mixed_batch` range is a step
  no-step        the H100 1b decode (8 new tokens) with its `decode_step` ranges removed (a derived capture: the same
                 SQL as the C++ test deletes the NVTX rows of that name): `decode` holds only layer ranges, no graph
                 and no per-step synchronisation, so no step is known
For the zoo exports, the workload's own count of its steps (<name>.facts.json "steps") is printed as truth= on
its `decode` line, and this oracle stops when its own count differs.

The rules, written out (docs/report-json.md `step_basis`), per stage S with n instances:
  own_range (kind)  S is the step range of the engine's step kinds or one of the kinds: its instances are steps
  step_range        a child C every instance of which has S as its innermost enclosing range (another stage's
                    instance on the same thread containing it whole), with more instances than S (and at least 2)
                    and GPU time >= 90% of S's: steps = C's instances, the fewest of such children
  graph_launches    S's GPU time is at least half graph work, its instances hold g >= 2 graph launch calls, g > n,
                    each instance at least one: steps = g
  own_range (child) S is the step range of the stage around it: steps = n
  inferred_steps    steps cut at the end of each device-to-host copy call (else each synchronise call) of the thread
                    that launched the most kernels, keeping steps that launched a kernel; a step starts at its first
                    launch call; the steps starting inside an instance of S on its thread, when there are at least 2
                    and more than n: steps = their count
  range_instances   none: steps = n
Step kinds here: a step range is a range whose children include a *_batch range with no more instances than it.
"""
import bisect
import collections
import json
import pathlib
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import timeline_expected  # noqa: E402  (the timeline oracle's export reader: rows only, no figures)

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
FIXTURES = [
    ("graph-ranges", "zoo/many_steps_graph_ranges.sqlite", ()),
    ("graph-launches", "zoo/many_steps_graph_noranges.sqlite", ()),
    ("inferred", "zoo/many_steps_eager_noranges.sqlite", ()),
    ("eager", "nsys-sqlite/eager.sqlite", ()),
    ("graph-steps", "nsys-sqlite/nodetrace.sqlite", ()),
    ("serving", "serving/serving_window1_h100.sqlite", ()),
    ("no-step", "nsys-sqlite/ex1b8.sqlite", ("decode_step",)),
]


def derive(source, dropped, directory):
    path = pathlib.Path(directory) / source.name
    shutil.copyfile(source, path)
    db = sqlite3.connect(path)
    for name in dropped:
        db.execute("DELETE FROM NVTX_EVENTS WHERE coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) = ?",
                   (name,))
    db.commit()
    db.close()
    return path


def inferred_steps(path):
    """(thread, start) of each step cut at the host's per-step synchronisation."""
    db = sqlite3.connect(path)
    names = dict(db.execute("SELECT id, value FROM StringIds"))
    calls = list(db.execute("SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                            "ORDER BY start"))
    kernels = collections.defaultdict(list)
    for corr, start, end in db.execute("SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        kernels[corr].append(end - start)
    transfers = collections.defaultdict(list)
    to_host = set()
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        if table not in tables:
            continue
        kind = "copyKind" if table.endswith("MEMCPY") else "0"
        for corr, start, end, copy_kind in db.execute(f"SELECT correlationId, start, end, {kind} FROM {table}"):
            transfers[corr].append(end - start)
            if copy_kind == 2:
                to_host.add(corr)
    launches = collections.Counter(tid for _, _, tid, corr, _ in calls if corr in kernels)
    if not launches:
        return []
    thread = launches.most_common(1)[0][0]
    mine = [c for c in calls if c[2] == thread]
    by_copy = any(c[3] in to_host for c in mine)
    syncs = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
             "cuCtxSynchronize", "cuEventSynchronize")
    steps = []
    step_start, step_kernels = None, 0
    for start, _, _, corr, name_id in mine:
        if (corr in kernels or corr in transfers) and step_start is None:
            step_start = start
        step_kernels += len(kernels.get(corr, []))
        cut = corr in to_host if by_copy else names.get(name_id, "").startswith(syncs)
        if cut and step_start is not None:
            if step_kernels:
                steps.append((thread, step_start))
            step_start, step_kernels = None, 0
    return steps


def units(path):
    stages, api, calls, gpu, _ = timeline_expected.load(path)
    names = {key: (key[0] + ":" + key[1] if key[0] else key[1]) for key in stages}
    # Per instance: (thread, start, end, stage); the innermost enclosing instance of another stage.
    placed = sorted(((tid, s, -e, e, names[key]) for key, rows in stages.items() for s, e, tid in rows))
    enclosing = collections.defaultdict(collections.Counter)
    open_ = []
    for tid, s, _, e, stage in placed:
        while open_ and (open_[-1][0] != tid or open_[-1][2] < s):
            open_.pop()
        for up in reversed(open_):
            if up[3] != stage and up[2] >= e:
                enclosing[stage][up[3]] += 1
                break
        open_.append((tid, s, e, stage))
    # GPU time, graph time and graph launches per stage, by the instance open on the launching thread.
    def owner_of(rows):
        by_thread = collections.defaultdict(list)
        for i, (s, e, tid) in enumerate(rows):
            by_thread[tid].append((s, e, i))

        def owner(tid, t):  # the latest-starting instance on the thread that started by t, if still open at t
            found = by_thread.get(tid, [])
            j = bisect.bisect_right(found, (t, float("inf"), float("inf"))) - 1
            return found[j][2] if j >= 0 and found[j][1] >= t else None
        return owner

    gpu_time = collections.Counter()
    graph_time = collections.Counter()
    graph_launches = collections.defaultdict(collections.Counter)  # stage -> instance -> launches
    for key, rows in stages.items():
        owner = owner_of(rows)
        for start, end, tid, corr, kind in api:
            if kind == "graph":
                i = owner(tid, start)
                if i is not None:
                    graph_launches[names[key]][i] += 1
        for start, end, corr, label, in_graph, is_exec in gpu:
            if corr not in calls:
                continue
            if owner(*calls[corr]) is not None:
                gpu_time[names[key]] += end - start
                graph_time[names[key]] += (end - start) if in_graph else 0
    counts = {names[key]: len(rows) for key, rows in stages.items()}
    # The engine's step range: one whose children include a *_batch range with no more instances than it.
    kinds, step_range = set(), None
    for stage in counts:
        children = [c for c, ups in enclosing.items() if stage in ups]
        batch = [c for c in children if c.endswith("_batch") and counts[c] <= counts[stage]]
        if batch:
            step_range, kinds = stage, set(batch)
    holds = {}
    for stage in counts:
        best = None
        for child, ups in enclosing.items():
            if list(ups) != [stage] or ups[stage] != counts[child] or counts[child] < 2 or counts[child] <= counts[stage]:
                continue
            if gpu_time[stage] <= 0 or gpu_time[child] < 0.9 * gpu_time[stage]:
                continue
            if best is None or counts[child] < counts[best]:
                best = child
        if best:
            holds[stage] = best
    step_of = {child: stage for stage, child in holds.items()}
    inferred = None
    result = {}
    for stage, n in counts.items():
        per_instance = graph_launches[stage]
        launches = sum(per_instance.values())
        if stage == step_range or stage in kinds:
            result[stage] = ("own_range", n)
        elif stage in holds:
            result[stage] = ("step_range", counts[holds[stage]])
        elif (gpu_time[stage] > 0 and 2 * graph_time[stage] >= gpu_time[stage] and launches >= 2 and launches > n
              and len(per_instance) == n):
            result[stage] = ("graph_launches", launches)
        elif stage in step_of:
            result[stage] = ("own_range", n)
        else:
            if inferred is None:
                inferred = inferred_steps(path)
            rows = stages[next(key for key in stages if names[key] == stage)]
            count = sum(any(tid == thread and s <= start <= e for s, e, thread in rows) for tid, start in inferred)
            if count >= 2 and count > n and gpu_time[stage] > 0:
                result[stage] = ("inferred_steps", count)
            else:
                result[stage] = ("range_instances", n)
    return {stage: (basis, steps, counts[stage]) for stage, (basis, steps) in result.items()}


def main():
    lines = ["# fixture stage: basis steps instances (written by tests/tools/step_units_expected.py; do not edit)"]
    with tempfile.TemporaryDirectory() as directory:
        for label, relative, dropped in FIXTURES:
            path = derive(DATA / relative, dropped, directory)
            facts = (DATA / relative).with_suffix("").with_suffix(".facts.json")
            truth = json.loads(facts.read_text())["steps"] if facts.exists() else None
            for stage, (basis, steps, instances) in sorted(units(path).items()):
                line = f"{label} {stage}: basis={basis} steps={steps} instances={instances}"
                if truth is not None and stage == "decode":
                    if steps != truth:
                        sys.exit(f"{relative}: {steps} steps in `decode`, the workload says {truth}")
                    line += f" truth={truth}"
                lines.append(line)
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
