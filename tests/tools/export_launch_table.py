#!/usr/bin/env python3
"""Writes a stage's kernel launches from an nsys SQLite export as a compact TSV for the ncu plan's tests.

The full export of a long decode is hundreds of MB; the plan needs only each launch's kernel, configuration
and duration, in launch order. Format (tab-separated, nothing of the machine's environment):
    # stage <name>
    kernel <index> <demangled name>                           one line per distinct kernel
    config <index> <grid> <block> <shared memory bytes>       one line per distinct launch configuration
    <kernel index> <config index> <duration ns>               one line per launch, in launch order
grid and block as ncu prints them: "(2, 64, 1)". Kernels whose GPU start lies inside an instance of the NVTX
range (push/pop or start/end, any domain), as read_stage_kernel_launches() reads them.
Usage: export_launch_table.py EXPORT.sqlite STAGE OUT.tsv
"""
import sqlite3
import sys


def main(path, stage, out):
    db = sqlite3.connect(path)
    ranges = sorted(db.execute("SELECT start, end FROM NVTX_EVENTS WHERE text = ? AND end IS NOT NULL", (stage,)))
    names, configs, rows = {}, {}, []
    for start, end, name, gx, gy, gz, bx, by, bz, smem in db.execute(
            "SELECT k.start, k.end, s.value, gridX, gridY, gridZ, blockX, blockY, blockZ, "
            "staticSharedMemory + dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName ORDER BY k.start"):
        if not any(a <= start <= b for a, b in ranges):
            continue
        kernel = names.setdefault(name, len(names))
        config = configs.setdefault(f"({gx}, {gy}, {gz})\t({bx}, {by}, {bz})\t{smem}", len(configs))
        rows.append(f"{kernel}\t{config}\t{end - start}")
    with open(out, "w") as file:
        file.write(f"# stage {stage}\n")
        for name, index in names.items():
            file.write(f"kernel\t{index}\t{name}\n")
        for config, index in configs.items():
            file.write(f"config\t{index}\t{config}\n")
        file.write("\n".join(rows) + "\n")
    print(f"{out}: {len(names)} kernels, {len(rows)} launches", file=sys.stderr)


if __name__ == "__main__":
    main(*sys.argv[1:4])
