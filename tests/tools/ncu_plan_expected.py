#!/usr/bin/env python3
"""Independent expected figures for the per-kernel ncu plan of tests/unit/ncu_plan_test.cpp.

Reads the stage's kernel launches from an nsys SQLite export with Python's sqlite3 (no code shared with
libllmprof): kernels whose GPU start lies inside an instance of the NVTX range, with their launch
configuration (grid, block, static + dynamic shared memory). Selects the heaviest kernels up to a coverage
target, then replays ncu 2025.3.1's counting under --filter-mode per-launch-config: launches of the pass's
kernels counted per (kernel, configuration), the first --launch-count past --launch-skip profiled (measured on
the H200: tests/data/ncu-plan/README.md; the kernels here have one mangled name each, printed below, so the
name stands for the function ncu counts). Two plans, the one
of least estimated time kept: progress passes (a pass raises its count until every (kernel, configuration)
gets its launch, up to a cap, else the groups left go to another pass) and packed passes (kernels placed in
passes where they do not block each other). Also the planned launches' durations against their
configurations' means, on the batch-8 decode (SQLite) and on a growing-context decode (the compact launch
table of tests/tools/export_launch_table.py). Run from the repository root:
    python3 tests/tools/ncu_plan_expected.py
"""
import collections
import pathlib
import re
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def stage_launches(path, stage):
    db = sqlite3.connect(path)
    ranges = sorted(db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = ? AND end IS NOT NULL", (stage,)))
    launches = []
    for start, end, name, gx, gy, gz, bx, by, bz, smem in db.execute(
            "SELECT k.start, k.end, s.value, gridX, gridY, gridZ, blockX, blockY, blockZ, "
            "staticSharedMemory + dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start"):
        if any(a <= start <= b for a, b in ranges):
            launches.append((name, f"grid ({gx}, {gy}, {gz}) block ({bx}, {by}, {bz}) smem {smem}", end - start))
    return launches


def table_launches(path):
    """The compact launch table of tests/tools/export_launch_table.py: (kernel, configuration, duration)."""
    kernels, configs, launches = {}, {}, []
    for line in pathlib.Path(path).read_text().splitlines():
        fields = line.split("\t")
        if line.startswith("#") or not line:
            continue
        if fields[0] == "kernel":
            kernels[fields[1]] = fields[2]
        elif fields[0] == "config":
            configs[fields[1]] = f"grid {fields[2]} block {fields[3]} smem {fields[4]}"
        else:
            launches.append((kernels[fields[0]], configs[fields[1]], int(fields[2])))
    return launches


def select(launches, target):
    totals = collections.Counter()
    for name, _, duration in launches:
        totals[name] += duration
    stage_time = sum(totals.values())
    chosen, reached = [], 0
    for name, time in sorted(totals.items(), key=lambda item: (-item[1], item[0])):
        if reached >= target * stage_time:
            break
        chosen.append(name)
        reached += time
    return chosen, stage_time


def bucket(config):
    """A configuration's group: each grid dimension raised to a power of two, block and shared memory kept."""
    match = re.fullmatch(r"grid \((\d+), (\d+), (\d+)\) (.*)", config)
    if not match:
        return config
    up = [1 << (int(v) - 1).bit_length() if int(v) > 0 else 1 for v in match.groups()[:3]]
    return f"grid bucket ({up[0]}, {up[1]}, {up[2]}) {match.group(4)}"


def simulate(launches, kernels, skip, count, need=None):
    """ncu's counting per kernel in each exact configuration; ordinals per (kernel, bucket) group. With need (group -> launches
    still wanted, ordinals already planned), the pass ends at the launch that fills the last wanted one."""
    per_config, per_group, hits = collections.Counter(), collections.Counter(), []
    for index, (name, config, _) in enumerate(launches):
        if name not in kernels:
            continue
        group = (name, bucket(config))
        per_config[(name, config)] += 1
        per_group[group] += 1
        if skip < per_config[(name, config)] <= skip + count:
            hits.append((index, group, per_group[group]))
    end = len(launches)
    if need is not None:
        missing, last = {}, None
        for index, group, ordinal in hits:
            wanted, done = need(group)
            if ordinal in done:
                continue
            missing.setdefault(group, wanted - len(done))
            if missing[group] > 0:
                missing[group] -= 1
                last = index
        end = len(launches) if last is None else last + 1
    got = collections.defaultdict(list)
    profiled = 0
    for index, group, ordinal in hits:
        if index < end:
            profiled += 1
            got[group].append(ordinal)
    return profiled, got, end


def pack(launches, order, wanted=1, cap=16, per_launch_s=0.6, per_pass_s=0.0):
    """Kernels (heaviest first) into passes: each joins the pass where it adds the least estimated time (its
    launches plus those a higher --launch-count adds to the pass) or opens a new pass when that is cheaper.
    A pass's count is the latest position, among its kernels' launches counted together, of a kernel's
    last wanted launch there. Returns [(kernels, count)]."""
    selected = set(order)
    sequences = collections.defaultdict(list)
    for name, config, _ in launches:
        if name in selected:
            sequences[(name, config)].append(name)

    def needed(members):
        count = 0
        for sequence in sequences.values():
            totals = collections.Counter(k for k in sequence if k in members)
            position, seen = 0, collections.Counter()
            for kernel in sequence:
                if kernel not in members:
                    continue
                position += 1
                seen[kernel] += 1
                if seen[kernel] == min(wanted, totals[kernel]):
                    count = max(count, position)
        return max(count, wanted)

    def profiled(members, count):
        return sum(min(count, sum(1 for k in sequence if k in members)) for sequence in sequences.values())

    passes = []  # [members, count, profiled]
    for kernel in order:
        count = needed({kernel})
        best_cost, best = per_pass_s + profiled({kernel}, count) * per_launch_s, None
        for i, (members, pass_count, pass_profiled) in enumerate(passes):
            joined = members | {kernel}
            joined_count = needed(joined)
            if joined_count > cap:
                continue
            joined_profiled = profiled(joined, joined_count)
            cost = (joined_profiled - pass_profiled) * per_launch_s
            if cost <= best_cost:
                best_cost, best = cost, (i, [joined, joined_count, joined_profiled])
        if best is None:
            passes.append([{kernel}, count, profiled({kernel}, count)])
        else:
            passes[best[0]] = best[1]
    return [([k for k in order if k in members], count) for members, count, _ in passes]


def plan(launches, kernels, skip=0, wanted=1, cap=16, per_launch_s=0.6, per_pass_s=0.0, order=None, intercept_s=0.0,
         extrapolated_limit=0.05):
    """Passes until every (kernel, configuration) of the kernels has its launches, two ways, the one of least
    estimated time kept (fewer unreached kernels first, ties to progress passes): progress passes alone, and,
    with --launch-skip 0, the packed passes (pack(), each replayed through simulate()) followed by progress
    passes for what they leave open. A progress pass takes the cheapest --launch-count that gives at least one
    open group its launches; when none does (kernels crossing each other's shared configurations), the
    heaviest open kernel (first in `order`) gets one alone. Returns passes [(count, profiled, kernels)], the
    planned groups, every group, and the planned ordinals per group."""
    groups = collections.Counter((name, bucket(config)) for name, config, _ in launches if name in kernels)
    order = order or sorted(kernels)
    first, time = {}, collections.Counter()
    for index, (name, config, duration) in enumerate(launches):
        first.setdefault((name, bucket(config)), index)
        time[(name, bucket(config))] += duration
    stage_time = sum(d for _, _, d in launches)
    # Late groups (first launch after every selected kernel's first group) extrapolated, latest first, within
    # the limit's share of the stage's kernel time.
    horizon = max(min(first[g] for g in groups if g[0] == k) for k in kernels)
    extrapolated, spent = set(), 0
    for g in sorted(groups, key=lambda g: -first[g]):
        if first[g] <= horizon:
            break
        if spent + time[g] <= extrapolated_limit * stage_time:
            spent += time[g]
            extrapolated.add(g)

    def want(g):
        return 0 if g in extrapolated else min(wanted, max(groups[g] - skip, 0))

    def pass_s(end):
        return max(per_pass_s - (len(launches) - end) * intercept_s, 0.0)

    def open_groups(kernel_set, planned):
        return [g for g in groups if g[0] in kernel_set and len(planned.get(g, ())) < want(g)]

    def choose(kernel_set, ordinals):
        before = len(open_groups(kernel_set, ordinals))
        best = None
        for count in range(wanted, cap + 1):
            profiled, got, end = simulate(launches, kernel_set, skip, count,
                                          lambda g: (want(g), ordinals.get(g, set())))
            after = collections.defaultdict(set, {g: set(o) for g, o in ordinals.items()})
            for g, o in got.items():
                after[g] |= set(o)
            left = open_groups(kernel_set, after)
            cost = pass_s(end) + profiled * per_launch_s
            if left:
                cost += per_pass_s + sum(want(g) - len(after.get(g, ())) for g in left) * per_launch_s
            if len(left) < before and (best is None or cost < best[0]):
                best = (cost, count, profiled, got, end)
            if not left:
                break
        return best

    def add(passes, ordinals, count, profiled, got, members, end):
        passes.append((count, profiled, members, end, profiled * per_launch_s + pass_s(end)))
        for g, o in got.items():
            ordinals[g] |= set(o)

    def progress(remaining, passes, ordinals, unreached):
        while remaining:
            members = list(remaining)
            best = choose(set(members), ordinals)
            if best is None:
                members = [remaining[0]]
                best = choose(set(members), ordinals)
            if best is None:
                unreached.append(remaining.pop(0))
                continue
            _, count, profiled, got, end = best
            add(passes, ordinals, count, profiled, got, members, end)
            remaining = [k for k in remaining if open_groups({k}, ordinals)]

    selected = [k for k in order if k in kernels]
    candidates = []
    for packing in (False, True):
        if packing and skip != 0:
            continue
        passes, ordinals, unreached = [], collections.defaultdict(set), []
        remaining = selected
        if packing:
            packable = [l for l in launches if (l[0], bucket(l[1])) not in extrapolated]
            for members, count in pack(packable, selected, wanted, cap, per_launch_s, per_pass_s):
                profiled, got, end = simulate(launches, set(members), skip, count,
                                              lambda g: (want(g), ordinals.get(g, set())))
                add(passes, ordinals, count, profiled, got, members, end)
            remaining = [k for k in selected if open_groups({k}, ordinals)]
        progress(remaining, passes, ordinals, unreached)
        estimate = sum(p[4] for p in passes)
        candidates.append(((len(unreached), estimate, packing), passes, ordinals))
    # Both ways and their estimates, for the plan's "passes:" line (printed by main()).
    plan.alternatives = {("packed" if key[2] else "progressive"): (len(p), sum(x[1] for x in p), key[1])
                         for key, p, _ in candidates}
    _, passes, ordinals = min(candidates, key=lambda candidate: candidate[0])
    planned = {g for g, o in ordinals.items() if o}
    return passes, planned, groups, ordinals


def coverage_split(launches, planned, groups):
    """Measured: groups with a planned launch; extrapolated: the other groups of a kernel that has one."""
    time = collections.Counter()
    for name, config, duration in launches:
        time[(name, bucket(config))] += duration
    stage_time = sum(time.values())
    measured_kernels = {g[0] for g in planned}
    measured = sum(time[g] for g in planned)
    extrapolated = sum(time[g] for g in groups if g not in planned and g[0] in measured_kernels)
    return measured / stage_time, extrapolated / stage_time


def representativeness(launches, ordinals, tolerance=0.25):
    """nsys durations of the planned launches against every launch of their (kernel, configuration)."""
    durations = collections.defaultdict(list)
    for name, config, duration in launches:
        durations[(name, bucket(config))].append(duration)
    extrapolated = measured = 0
    ratios = {}
    for group, chosen in ordinals.items():
        if not chosen:
            continue
        series = durations[group]
        planned_mean = sum(series[o - 1] for o in chosen) / len(chosen)
        ratios[group] = planned_mean / (sum(series) / len(series))
        extrapolated += planned_mean * len(series)
        measured += sum(series)
    outside = [g for g, r in ratios.items() if r > 1 + tolerance or r < 1 / (1 + tolerance)]
    return extrapolated / measured, min(ratios.values()), max(ratios.values()), outside


def main():
    launches = stage_launches(DATA / "ncu-plan" / "ex1b8_configs.sqlite", "decode")
    kernels, stage_time = select(launches, 0.9)
    time = collections.Counter()
    for name, config, duration in launches:
        time[(name, bucket(config))] += duration
    print(f"ex1b8 decode: launches={len(launches)} stage_time={stage_time} selected={len(kernels)} "
          f"configs={len({c for _, c, _ in launches})}")
    for per_pass_s in (0.0, 30.0):
        passes, planned, groups, ordinals = plan(launches, set(kernels), per_pass_s=per_pass_s, order=kernels)
        covered = sum(time[g] for g in planned)
        measured, extrapolated = coverage_split(launches, planned, groups)
        print(f"  seconds_per_pass={per_pass_s}: groups={len(groups)} passes={[(p[0], p[1]) for p in passes]} "
              f"planned_launches={sum(p[1] for p in passes)} planned_groups={len(planned)} "
              f"expected_coverage={covered / stage_time:.6f}")
        print(f"    seconds_per_pass={per_pass_s} split: measured={measured:.6f} extrapolated={extrapolated:.6f} "
              f"pass_ends={','.join(str(p[3]) for p in passes)} estimated_s={sum(p[4] for p in passes):.4f}")
        print(f"    seconds_per_pass={per_pass_s} alternatives: " + " ".join(
            f"{way}_passes={n} {way}_launches={launches_} {way}_estimated_s={estimate:.4f}"
            for way, (n, launches_, estimate) in sorted(plan.alternatives.items())))
        ratio, low, high, outside = representativeness(launches, ordinals)
        print(f"    planned launches extrapolated / measured={ratio:.6f} per-config ratio {low:.4f}..{high:.4f} "
              f"beyond 25%={len(outside)}")
    # Kernels crossing each other's configurations (A's launch first in c1, B's first in c2) with the count capped
    # at 1: the second pass of both reaches nothing new, so A and then B get a pass of their own.
    crossing = [("A", "c1", 10), ("B", "c2", 10), ("B", "c1", 10), ("A", "c2", 10)]
    passes_x, planned_x, _, _ = plan(crossing, {"A", "B"}, cap=1, order=["A", "B"])
    print(f"  crossing, cap 1: passes={[(p[0], p[1], p[2]) for p in passes_x]} planned_groups={len(planned_x)}")
    shared = collections.defaultdict(set)
    for name, config in groups:
        shared[config].add(name)
    print(f"  configs shared by several selected kernels: {sum(1 for names in shared.values() if len(names) > 1)}")
    # The passes' --kernel-name by mangled name: every selected kernel's mangled names in the stage, escaped
    # (mangled names are [A-Za-z0-9_], nothing to escape) and anchored, in the order the kernels were selected.
    mangled = stage_mangled_names(DATA / "ncu-plan" / "ex1b8_configs.sqlite", "decode")
    names = [m for kernel in kernels for m in mangled[kernel]]
    regex = "regex:^(?:" + "|".join(dict.fromkeys(names)) + ")$"
    print(f"  mangled names: kernels with one={sum(1 for k in kernels if len(mangled[k]) == 1)} "
          f"with several={sum(1 for k in kernels if len(mangled[k]) > 1)} all-selected regex length={len(regex)} "
          f"first={names[0]}")


def growing_context():
    """The 1b decode with a 32-token prompt and 192 new tokens (H100, 2026-11-25, launch table only)."""
    launches = table_launches(DATA / "ncu-plan" / "launches-1b-p32-n192.tsv")
    kernels, stage_time = select(launches, 0.9)
    per_pass_s = 3.97 + len(launches) * 0.00045  # the bare run's wall time on the H100 + 0.45 ms per launch
    time = collections.Counter()
    for name, config, duration in launches:
        time[(name, bucket(config))] += duration
    # Passes end their workload after their last planned launch: each is estimated at the whole replay less
    # the interception (0.45 ms) of the stage's launches after its end.
    passes, planned, groups, ordinals = plan(launches, set(kernels), per_pass_s=per_pass_s, order=kernels,
                                             intercept_s=0.00045)
    estimate = sum(p[4] for p in passes)
    exact = len({(name, config) for name, config, _ in launches if name in set(kernels)})
    measured, extrapolated = coverage_split(launches, planned, groups)
    print(f"1b p32 n192 decode: launches={len(launches)} stage_time={stage_time} selected={len(kernels)} "
          f"groups={len(groups)} exact_configs={exact} seconds_per_pass={per_pass_s:.4f}")
    print(f"  passes={[(p[0], p[1], len(p[2])) for p in passes]} planned_launches={sum(p[1] for p in passes)} "
          f"planned_groups={len(planned)} expected_coverage={sum(time[g] for g in planned) / stage_time:.6f} "
          f"estimated_s={estimate:.4f}")
    print(f"  split: measured={measured:.6f} extrapolated={extrapolated:.6f} "
          f"extrapolated_groups={len(groups) - len(planned)} pass_ends={','.join(str(p[3]) for p in passes)}")
    ratio, low, high, outside = representativeness(launches, ordinals)
    print(f"  planned launches extrapolated / measured={ratio:.6f} per-config ratio {low:.4f}..{high:.4f} "
          f"beyond 25%={[(g[0][:40], g[1]) for g in outside]}")


def serving_launches(steps=400):
    """A continuous-batching loop: the batch changes every step (1..64, a fixed pseudo-random walk), and with it
    the grids of a GEMM (4 blocks per sequence) and of attention (sequence x 8 heads); a norm keeps its grid.
    Durations follow the grid."""
    launches = []
    for step in range(steps):
        batch = (step * 37 + step * step) % 64 + 1
        launches.append(("gemm", f"grid ({4 * batch}, 1, 1) block (128, 1, 1) smem 0", 1000 + 50 * batch))
        launches.append(("attention", f"grid ({batch}, 8, 1) block (256, 1, 1) smem 4096", 800 + 40 * batch))
        launches.append(("norm", "grid (1, 1, 1) block (512, 1, 1) smem 0", 300))
    return launches


def serving():
    launches = serving_launches()
    kernels = ["gemm", "attention", "norm"]
    passes, planned, groups, _ = plan(launches, set(kernels), per_pass_s=10.0, order=kernels, intercept_s=0.00045)
    exact = len({(name, config) for name, config, _ in launches})
    measured, extrapolated = coverage_split(launches, planned, groups)
    print(f"serving loop: launches={len(launches)} exact_configs={exact} groups={len(groups)} "
          f"passes={len(passes)} planned_launches={sum(p[1] for p in passes)} "
          f"estimated_s={sum(p[4] for p in passes):.4f} measured={measured:.6f} extrapolated={extrapolated:.6f} "
          f"pass_ends={','.join(str(p[3]) for p in passes)}")


def stage_mangled_names(path, stage):
    db = sqlite3.connect(path)
    ranges = sorted(db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = ? AND end IS NOT NULL", (stage,)))
    names = collections.defaultdict(list)
    for start, demangled, mangled in db.execute(
            "SELECT k.start, d.value, m.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d ON d.id = "
            "k.demangledName JOIN StringIds m ON m.id = k.mangledName ORDER BY k.start"):
        if any(a <= start <= b for a, b in ranges) and mangled not in names[demangled]:
            names[demangled].append(mangled)
    return names


if __name__ == "__main__":
    main()
    growing_context()
    serving()
