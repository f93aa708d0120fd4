#!/usr/bin/env python3
"""Independent expected figures for tests/e2e/graph_capture_test.cpp (the node-traced second capture).

Reads the recorded H100 stats of the same CUDA-graph decode under --cuda-graph-trace=graph and =node
(tests/data/nsys-sqlite/{graphtrace,nodetrace}_summaries, nsys 2025.3) with Python's csv module, no code
shared with libllmprof, and prints: graph launches in the first capture's CUDA API summary, the decode
range's CPU time in both captures, the node capture's kernel time under decode and its top kernel there, and
the kernel names of each capture's cuda_gpu_kern_sum. Run from the repository root:
    python3 tests/tools/graph_node_pass_expected.py
"""
import collections
import csv
import pathlib

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nsys-sqlite"


def rows(capture, report):
    with open(DATA / f"{capture}_summaries" / f"summary_{report}.csv", newline="") as handle:
        return list(csv.DictReader(handle))


launches = sum(int(r["Num Calls"]) for r in rows("graphtrace", "cuda_api_sum")
               if r["Name"].startswith(("cudaGraphLaunch", "cuGraphLaunch")))
print("graph launches (first capture):", launches)
for capture in ("graphtrace", "nodetrace"):
    wall = sum(int(r["Total Time (ns)"]) for r in rows(capture, "nvtx_sum") if r["Range"] == ":decode")
    print(f"decode CPU time ({capture}):", wall)
decode = collections.defaultdict(int)
for r in rows("nodetrace", "nvtx_kern_sum"):
    if r["NVTX Range"] == ":decode":
        decode[r["Kernel Name"]] += int(r["Total Time (ns)"])
print("decode kernel time (nodetrace):", sum(decode.values()))
print("top decode kernel (nodetrace):", max(decode, key=decode.get))
for capture in ("graphtrace", "nodetrace"):
    print(f"kernels ({capture}):", len(rows(capture, "cuda_gpu_kern_sum")))
