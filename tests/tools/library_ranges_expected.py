#!/usr/bin/env python3
"""Independent expected figures for tests/unit/library_ranges_test.cpp: which NVTX ranges of recorded exports are a
library's, read with Python's sqlite3 and classified with this file's own rules (fnmatch, nothing of libllmprof).

1. tests/data/cross-rank/h200x2/no-straggler/r0.sqlite (H200, nsys 2025.3, a two-rank tensor-parallel decode):
   every closed push/pop range (domain from its NvtxDomainCreate row, "" for the default domain), its count, and
   the library it belongs to ("-" for the workload's own). NCCL's `ncclAllReduce` is in the domain "NCCL".
2. tests/data/zoo/hf_*.sqlite (H100, nsys 2025.3.1, Hugging Face generate() on CUDA 13): the same per range, and the
   cudaProfilerStart/Stop calls the export recorded.
3. tests/data/serving/serving_window1_h100.sqlite (H100, nsys 2025.3): what the test's workload without NVTX ranges
   is made of (tests/support/library_range_exports.hpp): the `reduce_kernel` launches it wraps in CCCL's scan, one
   per engine step, and the runtime calls of the thread that launched them.

Run from the repository root: python3 tests/tools/library_ranges_expected.py > tests/data/oracles/library_ranges.txt
"""
import fnmatch
import pathlib
import sqlite3

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"

# (library, domain or None for any, name pattern): docs/library-ranges.md, written out again here.
RULES = [
    ("CCCL", "CCCL", "*"), ("CCCL", None, "cub::*"), ("CCCL", None, "thrust::*"),
    ("NCCL", "NCCL", "*"), ("cuBLAS", "cuBLAS", "*"), ("cuBLASLt", "cuBLASLt", "*"), ("cuDNN", "cuDNN", "*"),
    ("TensorRT", "TensorRT", "*"), ("RAPIDS", "libcudf", "*"), ("RAPIDS", "librmm", "*"),
    ("Hugging Face tokenizers", "tokenizers", "*"),
    ("PyTorch", None, "aten::*"), ("PyTorch", None, "prim::*"), ("PyTorch", None, "c10d::*"),
    ("PyTorch", None, "autograd::*"), ("PyTorch", None, "*, seq = *"), ("PyTorch", None, "*, op_id = *"),
    ("PyTorch", None, "*, sizes = *"), ("PyTorch", None, "Torch-Compiled Region*"),
    ("PyTorch", None, "CompiledFunction*"), ("PyTorch", None, "## Call CompiledFxGraph*"),
    ("Triton", None, "triton_*"),
]


def library(domain, name):
    for owner, rule_domain, pattern in RULES:
        # fnmatchcase: `[` and `?` are not special in our patterns, and none of these names hold them.
        if (rule_domain is None or rule_domain == domain) and fnmatch.fnmatchcase(name, pattern):
            return owner
    return "-"


def ranges(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    domains = {}
    for tid, domain_id, text, text_id in db.execute(
            "SELECT globalTid, domainId, text, textId FROM NVTX_EVENTS WHERE eventType = 75"):
        domains[(tid >> 24, domain_id)] = text if text is not None else strings.get(text_id, "")
    counts = {}
    for tid, domain_id, text, text_id in db.execute(
            "SELECT globalTid, domainId, text, textId FROM NVTX_EVENTS WHERE eventType = 59 AND end IS NOT NULL"):
        name = text if text is not None else strings.get(text_id, "")
        domain = domains.get((tid >> 24, domain_id), "") if domain_id else ""
        counts[(domain, name)] = counts.get((domain, name), 0) + 1
    return counts


def main():
    r0 = DATA / "cross-rank" / "h200x2" / "no-straggler" / "r0.sqlite"
    for (domain, name), count in sorted(ranges(r0).items()):
        qualified = f"{domain}:{name}" if domain else name
        print(f"h200x2-r0 range={qualified} count={count} library={library(domain, name)}")
    for name in ("hf_dynamic_window", "hf_static_window", "hf_dynamic_whole"):
        path = DATA / "zoo" / f"{name}.sqlite"
        for (domain, range_name), count in sorted(ranges(path).items()):
            qualified = f"{domain}:{range_name}" if domain else range_name
            print(f"{name} range={qualified} count={count} library={library(domain, range_name)}")
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        calls = db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                           "WHERE s.value LIKE 'cudaProfilerStart%'").fetchone()[0]
        print(f"{name} calls profiler_start={calls}")
    window = sqlite3.connect(f"file:{DATA / 'serving' / 'serving_window1_h100.sqlite'}?mode=ro", uri=True)
    launches, threads = window.execute(
        "SELECT COUNT(*), COUNT(DISTINCT r.globalTid) FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId "
        "JOIN StringIds s ON s.id = k.shortName WHERE s.value = 'reduce_kernel'").fetchone()
    print(f"serving-window1 reduce_kernel_launches={launches} threads={threads}")
    for name in ("cub::DeviceScan::InclusiveScan", "thrust::reduce", "ncclAllReduce", "aten::mm, seq = 12, op_id = 34",
                 "autograd::engine::evaluate_function: MmBackward0", "MmBackward0, seq = 5", "my_block, op_id = 3",
                 "triton_poi_fused_add_0", "decode", "decode_step", "scheduler_step", "cublasGemmEx"):
        print(f"name={name.replace(' ', '_')} default-domain-library={library('', name)}")


if __name__ == "__main__":
    main()
