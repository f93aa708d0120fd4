#!/usr/bin/env python3
"""The shipped ncu section (config/ncu-sections/LlmprofRoofline.section) as a real ncu reads it: Debian 12's ncu
2022.3 (scripts/install-nsight.sh; it lists sections and metrics without a GPU) must list the section with no parse
error under --section-folder, and --list-metrics must name exactly the metrics the file names. Prints
LLMPROF-SKIPPED and exits 0 without that ncu (CI's scripts/test.sh sets LLMPROF_REQUIRE_REAL_TOOLS=1: then exit 1).
Usage: check_ncu_section.py REPOSITORY_ROOT
"""
import os
import pathlib
import re
import subprocess
import sys


def main(root):
    folder = root / "config" / "ncu-sections"
    section = folder / "LlmprofRoofline.section"
    names = re.findall(r'^\s*Name:\s*"([^"]+)"', section.read_text(), re.MULTILINE)
    ncu = pathlib.Path(os.environ.get("LLMPROF_NSIGHT_DIR", "/opt/llmprof/nsight")) / "root/usr/lib/nsight-compute/ncu"
    if not ncu.exists():
        print(f"LLMPROF-SKIPPED: no {ncu} (scripts/install-nsight.sh)")
        return 1 if os.environ.get("LLMPROF_REQUIRE_REAL_TOOLS") == "1" else 0
    listing = subprocess.run([str(ncu), "--section-folder", str(folder), "--list-sections"], capture_output=True,
                             text=True, timeout=60)
    if listing.returncode != 0 or "Error" in listing.stdout or "LlmprofRoofline" not in listing.stdout:
        print(f"ncu --list-sections does not list the section cleanly:\n{listing.stdout}{listing.stderr}")
        return 1
    metrics = subprocess.run([str(ncu), "--section-folder", str(folder), "--section", "LlmprofRoofline",
                              "--list-metrics"], capture_output=True, text=True, timeout=60)
    listed = [line.strip() for line in metrics.stdout.splitlines() if line.strip() and not line.startswith(" ")]
    if metrics.returncode != 0 or sorted(listed) != sorted(names) or len(names) != 34:
        print(f"ncu --list-metrics gives {len(listed)} metrics, the file names {len(names)}:\n"
              f"only listed: {sorted(set(listed) - set(names))}\nonly in the file: {sorted(set(names) - set(listed))}")
        return 1
    print(f"{ncu} lists LlmprofRoofline and its {len(listed)} metrics, as the file names them")
    return 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]))
