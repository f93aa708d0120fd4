#!/usr/bin/env python3
"""Baseline for bench_ncu_raw_parse: Python's csv module reading every row of the same file.

    python3 bench/python_csv_baseline.py FILE      (e.g. bench_ncu_raw_parse --keep-file's output)

Prints MB/s (MB = 10^6 bytes) and peak RSS, on one core, reading only (no number conversion),
so it is the floor of what a Python parser of the ncu raw page could do.
"""
import csv
import os
import resource
import sys
import time


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    size = os.path.getsize(path)
    start = time.perf_counter()
    rows = fields = 0
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        for row in csv.reader(f):
            rows += 1
            fields += len(row)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"python csv  {seconds:8.2f} s  {size / 1e6 / seconds:8.1f} MB/s  {rows:10d} rows  "
          f"peak RSS {peak_mb:7.1f} MB  ({size / 1e6:.1f} MB, {fields} fields)")


if __name__ == "__main__":
    main()
