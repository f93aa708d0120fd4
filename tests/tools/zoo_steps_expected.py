#!/usr/bin/env python3
"""Independent expected steps of the zoo's recorded exports (tests/unit/step_kinds_test.cpp, inferred steps).

Reads tests/data/zoo/NAME.sqlite with Python's sqlite3 and NAME.facts.json, what the workload wrote about itself
(tests/zoo/*.py), with nothing of libllmprof. The step thread: the thread whose CUDA calls launched the most
kernels and graph executions. A call's GPU work: the kernels (one per kernel launch; with --cuda-graph-trace=node
every kernel of a graph launch carries the launch's correlation id), graph executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
with the default --cuda-graph-trace=graph), copies and sets with its correlation id; GPU time = their summed
durations.

- engine_*: engine.py copies each step's tokens to the host once (`tokens.cpu()`, one device-to-host copy) and
  nothing else: the window is cut after each device-to-host copy of the step thread, the steps labelled in order
  by the facts' `steps` list. Per kind: steps and GPU time.
- hf_*: hf_generate.py's facts give the forward passes: 1 prefill + (new_tokens - 1) decode per generate() call
  (the whole-run capture holds two calls, the warm-up and the measured); and the GPU time of all the work the step
  thread launched up to its last synchronisation (device-to-host copy or synchronise call): what the steps hold.
- hf_small_whole_window: a whole run of hf_generate.py --window; the same count over the calls inside its
  cudaProfilerStart/Stop window (the measured generate() alone), as the timeline restricted to the window holds them.
- many_steps_*_noranges: many_steps.py wraps its decode loop in one `decode` NVTX range and copies each step's token
  to the host once: the calls inside `decode` cut after each device-to-host copy; steps and GPU time.
- engine_eager_spawn_none with every second step's device-to-host copy and stream synchronise call removed (as the
  test derives it): the waits left that close launched work (the copies left and the window's closing
  synchronise), and the facts' steps per wait between the first and the last.

Run from the repository root:  python3 tests/tools/zoo_steps_expected.py
"""
import collections
import json
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "zoo"
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
              "cuCtxSynchronize", "cuEventSynchronize")


def read(name):
    return read_export(DATA / f"{name}.sqlite", DATA / f"{name}.facts.json")


def read_export(export, facts_file):
    """The step thread's calls, each correlation id's GPU time, the device-to-host copies, the NVTX ranges and the
    workload's facts, from an export anywhere (scripts/zoo_live_steps.py reads a live run's with it)."""
    db = sqlite3.connect(export)
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    work = collections.defaultdict(int)  # correlation id -> GPU time
    launched = collections.Counter()     # correlation id -> kernels and graph executions
    for correlation, start, end in db.execute("SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL"):
        work[correlation] += end - start
        launched[correlation] += 1
    if "CUPTI_ACTIVITY_KIND_GRAPH_TRACE" in tables:
        for correlation, start, end in db.execute(
                "SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE"):
            work[correlation] += end - start
            launched[correlation] += 1
    to_host = set()
    for correlation, start, end, kind in db.execute(
            "SELECT correlationId, start, end, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY"):
        work[correlation] += end - start
        if kind == 2:
            to_host.add(correlation)
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for correlation, start, end in db.execute("SELECT correlationId, start, end FROM CUPTI_ACTIVITY_KIND_MEMSET"):
            work[correlation] += end - start
    calls = list(db.execute(
        "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start"))
    per_thread = collections.Counter()
    for _, _, thread, correlation, _ in calls:
        per_thread[thread] += launched[correlation]
    thread = per_thread.most_common(1)[0][0]
    own = [(start, end, correlation, strings[name_id]) for start, end, tid, correlation, name_id in calls
           if tid == thread]
    ranges = {text: (start, end) for text, start, end in db.execute(
        "SELECT coalesce(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId "
        "WHERE e.end IS NOT NULL")} if "NVTX_EVENTS" in tables else {}
    facts = json.loads(pathlib.Path(facts_file).read_text())
    return own, work, to_host, ranges, facts


def cut_at_copies(own, work, to_host):
    """GPU time of each step, a step ending with its call that copied device to host."""
    steps, current = [], 0
    for _, _, correlation, _ in own:
        current += work.get(correlation, 0)
        if correlation in to_host:
            steps.append(current)
            current = 0
    return steps


def engine_kinds(own, work, to_host, facts, name):
    """Each kind's GPU time per step, the steps labelled in order by the facts' `steps` list."""
    steps = cut_at_copies(own, work, to_host)
    assert len(steps) == len(facts["steps"]), (name, len(steps), len(facts["steps"]))
    kinds = collections.defaultdict(list)
    for kind, gpu in zip(facts["steps"], steps):
        kinds[kind].append(gpu)
    return steps, kinds


def engine(name):
    own, work, to_host, _, facts = read(name)
    steps, kinds = engine_kinds(own, work, to_host, facts, name)
    line = [f"{name}: steps={len(steps)}"]
    for kind in sorted(kinds):
        line.append(f"{kind}_steps={len(kinds[kind])} {kind}_gpu_time_ns={sum(kinds[kind])}")
    print(" ".join(line))


def hf(name, calls):
    own, work, to_host, _, facts = read(name)
    last_sync = max(i for i, (_, _, correlation, call) in enumerate(own)
                    if call.startswith(SYNC_CALLS) or correlation in to_host)
    total = sum(work.get(correlation, 0) for _, _, correlation, _ in own[:last_sync + 1])
    passes = facts["forward_passes"] * calls
    print(f"{name}: steps={passes} prefill_steps={facts['prefill_passes'] * calls} "
          f"decode_steps={facts['decode_passes'] * calls} gpu_time_ns={total}")


def hf_in_window(name):
    """A whole-run capture of hf_generate.py --window: the measured generate() is the calls from its
    cudaProfilerStart to its cudaProfilerStop, what the timeline restricted to that window holds."""
    own, work, to_host, _, facts = read(name)
    start = next(at for at, _, _, call in own if "ProfilerStart" in call)
    stop = next(at for at, _, _, call in own if "ProfilerStop" in call and at > start)
    inside = [call for call in own if start <= call[0] <= stop]
    last_sync = max(i for i, (_, _, correlation, call) in enumerate(inside)
                    if call.startswith(SYNC_CALLS) or correlation in to_host)
    total = sum(work.get(correlation, 0) for _, _, correlation, _ in inside[:last_sync + 1])
    print(f"{name} in its window: steps={facts['forward_passes']} prefill_steps={facts['prefill_passes']} "
          f"decode_steps={facts['decode_passes']} gpu_time_ns={total}")


def many_steps(name):
    own, work, to_host, ranges, facts = read(name)
    start, end = ranges["decode"]
    steps = cut_at_copies([call for call in own if start <= call[0] <= end], work, to_host)
    assert len(steps) == facts["steps"], (name, len(steps), facts["steps"])
    print(f"{name}: decode_steps={len(steps)} decode_gpu_time_ns={sum(steps)}")


def every_second_wait_removed(name):
    own, work, to_host, _, facts = read(name)
    copies = [correlation for _, _, correlation, _ in own if correlation in to_host]
    waits = [correlation for _, _, correlation, call in own if call.startswith("cudaStreamSynchronize")]
    gone = set(copies[1::2]) | set(waits[1::2])  # the 2nd, 4th, ... of each, as the test deletes them
    synchronisations, launched = 0, False
    for _, _, correlation, call in own:
        if correlation in gone:
            continue
        if correlation in to_host or call.startswith(SYNC_CALLS):
            synchronisations += launched  # a wait after kernels closes them; the window's last wait closes step 40
            launched = False
        elif work.get(correlation):
            launched = True
    print(f"{name} every second wait removed: synchronisations={synchronisations} "
          f"steps_per_synchronisation={len(facts['steps']) // (synchronisations - 1)}")


if __name__ == "__main__":
    for engine_name in ("engine_eager_spawn_none", "engine_graph_fork_none", "engine_graph_fork_none_graphtrace"):
        engine(engine_name)
    hf("hf_dynamic_window", 1)
    hf("hf_static_window", 1)
    hf("hf_dynamic_whole", 2)  # the warm-up generate() and the measured one, each of new_tokens passes
    hf_in_window("hf_small_whole_window")
    for many_name in ("many_steps_eager_noranges", "many_steps_graph_noranges"):
        many_steps(many_name)
    every_second_wait_removed("engine_eager_spawn_none")
