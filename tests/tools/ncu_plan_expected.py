#!/usr/bin/env python3
"""Independent expected figures for the per-kernel ncu plan of tests/unit/ncu_plan_test.cpp.

Reads the stage's kernel launches from an nsys SQLite export with Python's sqlite3 (no code shared with
libllmprof): kernels whose GPU start lies inside an instance of the NVTX range, with their launch
configuration (grid, block, static + dynamic shared memory). Selects the heaviest kernels up to a coverage
target, then replays ncu 2025.3.1's counting under --filter-mode per-launch-config: launches of the pass's
kernels counted per configuration, the first --launch-count past --launch-skip profiled. A pass raises its
count until every (kernel, configuration) gets its launch (up to a cap), else the kernels left go to
another pass. Run from the repository root:
    python3 tests/tools/ncu_plan_expected.py
"""
import collections
import pathlib
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


def simulate(launches, kernels, skip, count):
    per_config, per_group, profiled, got = collections.Counter(), collections.Counter(), 0, collections.defaultdict(list)
    for name, config, _ in launches:
        if name not in kernels:
            continue
        per_config[config] += 1
        per_group[(name, config)] += 1
        if skip < per_config[config] <= skip + count:
            profiled += 1
            got[(name, config)].append(per_group[(name, config)])
    return profiled, got


def plan(launches, kernels, skip=0, wanted=1, cap=16, per_launch_s=0.6, per_pass_s=0.0):
    groups = collections.Counter((name, config) for name, config, _ in launches if name in kernels)
    remaining, passes, planned = list(kernels), [], set()
    ordinals = collections.defaultdict(set)

    def reached(kernel, got):
        return all(len(got.get(g, [])) >= min(wanted, max(n - skip, 0)) for g, n in groups.items() if g[0] == kernel)

    def alone(kernels_left):
        return sum(min(wanted, max(n - skip, 0)) for g, n in groups.items() if g[0] in kernels_left)

    while remaining:
        chosen, best = None, None
        for count in range(wanted, cap + 1):
            profiled, got = simulate(launches, set(remaining), skip, count)
            left = [k for k in remaining if not reached(k, got)]
            cost = profiled * per_launch_s + ((per_pass_s + alone(set(left)) * per_launch_s) if left else 0)
            if best is None or cost < best:
                best, chosen = cost, (count, profiled, got)
            if not left:
                break
        count, profiled, got = chosen
        passes.append((count, profiled))
        planned |= {g for g, got_ordinals in got.items() if got_ordinals}
        for g, got_ordinals in got.items():
            ordinals[g] |= set(got_ordinals)
        left = [k for k in remaining if not reached(k, got)]
        if len(left) == len(remaining):
            break
        remaining = left
    return passes, planned, groups, ordinals


def representativeness(launches, ordinals, tolerance=0.25):
    """nsys durations of the planned launches against every launch of their (kernel, configuration)."""
    durations = collections.defaultdict(list)
    for name, config, duration in launches:
        durations[(name, config)].append(duration)
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
        time[(name, config)] += duration
    print(f"ex1b8 decode: launches={len(launches)} stage_time={stage_time} selected={len(kernels)} "
          f"configs={len({c for _, c, _ in launches})}")
    for per_pass_s in (0.0, 30.0):
        passes, planned, groups, ordinals = plan(launches, set(kernels), per_pass_s=per_pass_s)
        covered = sum(time[g] for g in planned)
        print(f"  seconds_per_pass={per_pass_s}: groups={len(groups)} passes={[(c, p) for c, p in passes]} "
              f"planned_launches={sum(p for _, p in passes)} planned_groups={len(planned)} "
              f"expected_coverage={covered / stage_time:.6f}")
        ratio, low, high, outside = representativeness(launches, ordinals)
        print(f"    planned launches extrapolated / measured={ratio:.6f} per-config ratio {low:.4f}..{high:.4f} "
              f"beyond 25%={len(outside)}")
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
