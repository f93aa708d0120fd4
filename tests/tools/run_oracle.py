#!/usr/bin/env python3
"""Runs a Python oracle (tests/tools/*_expected.py) and compares what it prints with the committed
expected-values file that the C++ test reads its expected figures from: a divergence between the
oracle and the file fails (with a diff), and the C++ test fails when the library diverges from the
file, so an oracle whose numbers no longer match the test cannot go unnoticed.

Usage: run_oracle.py ORACLE EXPECTED_FILE [ORACLE_ARGUMENTS...]
Re-bless after a deliberate fixture change: python3 ORACLE [ORACLE_ARGUMENTS...] > EXPECTED_FILE
"""
import difflib
import pathlib
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    oracle, expected = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    root = oracle.resolve().parents[2]
    finished = subprocess.run([sys.executable, str(oracle), *sys.argv[3:]], cwd=root, capture_output=True, text=True)
    if finished.returncode != 0:
        print(f"{oracle.name} exited {finished.returncode}:\n{finished.stderr}", file=sys.stderr)
        return 1
    want = expected.read_text().splitlines(keepends=True)
    got = finished.stdout.splitlines(keepends=True)
    if got != want:
        sys.stderr.writelines(difflib.unified_diff(want, got, str(expected), f"{oracle.name} now"))
        print(f"\n{oracle.name} no longer prints {expected}: the C++ test's expected figures and the oracle "
              f"diverge. Find out which is right; if the fixture changed on purpose, re-bless with "
              f"`python3 {oracle} {' '.join(sys.argv[3:])} > {expected}`", file=sys.stderr)
        return 1
    print(f"{oracle.name}: {len(got)} lines, identical to {expected}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
