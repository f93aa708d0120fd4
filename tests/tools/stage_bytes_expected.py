#!/usr/bin/env python3
"""Independent expected DRAM traffic per stage for tests/unit/stage_limits_test.cpp.

Reads a recorded run (ncu/raw.csv, nsys/summary_nvtx_kern_sum.csv, nsys/summary_nvtx_sum.csv,
stage1/metrics.json) with Python's csv and json modules only (no code shared with libllmprof) and prints, per
stage, the bytes ncu measured carried to all of the stage's launches: for each kernel of the stage (nsys
nvtx_kern_sum), its instances x the mean DRAM bytes of its ncu launches whose NVTX stack holds the stage.
DRAM bytes per launch are dram__bytes.sum.per_second x gpu__time_duration.sum (`--set roofline` records
only the rate); the peak is the highest dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second
over the launches, as ncu's roofline section computes it. The runs it reads have no ncu/plan.json: with one, the
analysis weighs the plan stage's bytes per launch configuration instead (checked by hand in stage_limits_test.cpp).

    python3 tests/tools/stage_bytes_expected.py RUN_DIR            # prints the TSV
    python3 tests/tools/stage_bytes_expected.py RUN_DIR --check F  # fails unless F holds exactly that TSV
"""
import collections
import csv
import json
import pathlib
import re
import sys

SCALE = {"": 1, "ns": 1, "us": 1e3, "ms": 1e6, "usecond": 1e3, "nsecond": 1, "msecond": 1e6, "byte/s": 1,
         "Kbyte/s": 1e3, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Tbyte/s": 1e12, "byte/second": 1, "byte/cycle": 1,
         "Kbyte/cycle": 1e3, "hz": 1, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9, "cycle/second": 1, "cycle/nsecond": 1e9,
         "cycle/usecond": 1e6, "cycle": 1, "Kcycle": 1e3, "Mcycle": 1e6, "inst": 1, "inst/cycle": 1}


# FLOP as ncu's roofline section counts them: tensor-core aggregates per source precision, CUDA-core
# instructions weighted FMA = 2, ADD/MUL = 1, half2 packed (HFMA2 = 4, HADD2/HMUL2 = 2).
TENSOR_FLOP = ["sm__ops_path_tensor_src_bf16_dst_fp32.sum", "sm__ops_path_tensor_src_fp16.sum",
               "sm__ops_path_tensor_src_tf32_dst_fp32.sum", "sm__ops_path_tensor_src_fp64.sum",
               "sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"]
CORE_FLOP = [("ffma", 2), ("fadd", 1), ("fmul", 1), ("dfma", 2), ("dadd", 1), ("dmul", 1), ("hfma", 4),
             ("hadd", 2), ("hmul", 2)]


def summary_rows(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==") and l.strip() not in ("", "ok")]
    return list(csv.DictReader(lines))


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else None


def join_key(name):
    name = re.sub(r"\((?:unsigned |signed )*(?:char|short|int|long|bool)(?: long)?\)(?=-?\d)", "", name)
    name = re.sub(r"(?<![\w])(?:[A-Za-z_]\w*|<unnamed>)::", "", name)
    return " ".join(name.split())


def ncu_launches(path):
    table = list(csv.reader(l for l in open(path, newline="") if not l.startswith("==")))
    header, units = table[0], table[1]
    column = {name: i for i, name in enumerate(header)}
    stack_column = next(i for i, name in enumerate(header) if name.startswith("thread Domain:Push/Pop_Range"))

    def get(row, name):
        value = number(row[column[name]])
        return None if value is None else value * SCALE[units[column[name]]]

    launches = []
    for row in table[2:]:
        duration_ns = get(row, "gpu__time_duration.sum")
        rate = get(row, "dram__bytes.sum.per_second")
        stack = re.findall(r'"([^"]*)"', row[stack_column])
        stages = []
        for entry in stack:
            domain, name = entry.split(":")[:2]
            stages.append(name if domain == "<default domain>" else domain + ":" + name)
        flop = 0.0
        for metric in TENSOR_FLOP:
            if metric in column:
                flop += get(row, metric) or 0.0
        cycles = get(row, "smsp__cycles_elapsed.avg") or 0.0
        for op, weight in CORE_FLOP:
            metric = f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed"
            if metric in column:
                flop += weight * (get(row, metric) or 0.0) * cycles
        launches.append({"name": row[column["Kernel Name"]], "stages": stages, "flop": flop,
                         "bytes": rate * duration_ns * 1e-9 if rate is not None and duration_ns else None,
                         "peak": get(row, "dram__bytes.sum.peak_sustained") *
                         get(row, "dram__cycles_elapsed.avg.per_second")})
    return launches


def main(run):
    run = pathlib.Path(run)
    launches = ncu_launches(run / "ncu" / "raw.csv")
    # A node-traced second capture (CUDA graphs) lists the graph kernels; the first capture's ranges stay.
    node_table = run / "nsys" / "node" / "summary_nvtx_kern_sum.csv"
    kern_rows = summary_rows(node_table if node_table.exists() else run / "nsys" / "summary_nvtx_kern_sum.csv")
    nsys_names = sorted({r["Kernel Name"] for r in kern_rows})
    by_key = collections.defaultdict(list)
    for name in nsys_names:
        by_key[join_key(name)].append(name)

    def nsys_name(ncu_name):
        if ncu_name in nsys_names:
            return ncu_name
        found = by_key.get(join_key(ncu_name), [])
        return found[0] if len(found) == 1 else ncu_name

    bytes_in_stage = collections.defaultdict(lambda: collections.defaultdict(list))
    flop_in_stage = collections.defaultdict(lambda: collections.defaultdict(list))
    for launch in launches:
        for stage in launch["stages"]:
            flop_in_stage[stage][nsys_name(launch["name"])].append(launch["flop"])
        if launch["bytes"] is None:
            continue
        for stage in launch["stages"]:
            bytes_in_stage[stage][nsys_name(launch["name"])].append(launch["bytes"])
    peak = max(l["peak"] for l in launches)
    wall, instances = {}, {}
    for r in summary_rows(run / "nsys" / "summary_nvtx_sum.csv"):
        stage = r["Range"][1:] if r["Range"].startswith(":") else r["Range"]
        wall[stage] = int(r["Total Time (ns)"])
        instances[stage] = int(r["Instances"])
    # A workload that writes no metrics file (the HF-style Python decode) states no model FLOP or bytes.
    metrics = run / "stage1" / "metrics.json"
    workload = json.load(open(metrics)) if metrics.exists() else {}
    kernels = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
    for r in kern_rows:
        stage = r["NVTX Range"][1:] if r["NVTX Range"].startswith(":") else r["NVTX Range"]
        kernels[stage][r["Kernel Name"]][0] += int(r["Total Time (ns)"])
        kernels[stage][r["Kernel Name"]][1] += int(r["Kern Inst"])
    print(f"peak_dram_bytes_per_s\t{peak:.9e}")
    steps = instances["decode"] * workload.get("new_tokens", 1)
    decode_flop = sum(count * sum(flop_in_stage["decode"][name]) / len(flop_in_stage["decode"][name])
                      for name, (_, count) in kernels["decode"].items() if flop_in_stage["decode"].get(name))
    if "flop_per_token" in workload:
        print(f"decode_flop_per_step\t{decode_flop / steps:.9e}\tmodel\t{workload['flop_per_token'] * workload['batch']:.9e}")
    print("stage\tdram_bytes\tdram_coverage\tsteps\tdram_bytes_per_step\tdram_bytes_per_s\t"
          "dram_bytes_per_s_while_busy\tmbu")
    for stage in sorted(kernels):
        total_ns = sum(t for t, _ in kernels[stage].values())
        covered_ns, total_bytes = 0, 0.0
        for name, (time_ns, count) in kernels[stage].items():
            measured = bytes_in_stage[stage].get(name)
            if measured:
                covered_ns += time_ns
                total_bytes += count * sum(measured) / len(measured)
        if covered_ns == 0:
            continue
        steps = instances[stage] * (workload.get("new_tokens", 1) if stage == "decode" else 1)
        # A CPU range shorter than its kernels (CUDA graphs) does not enclose them: no rate over it.
        rate = total_bytes / (wall[stage] * 1e-9) if wall[stage] >= total_ns else None
        rate_text = f"{rate:.9e}\t" if rate else "withheld\t"
        mbu_text = f"{rate / peak:.9e}" if rate else "withheld"
        print(f"{stage}\t{total_bytes:.9e}\t{covered_ns / total_ns:.9f}\t{steps}\t{total_bytes / steps:.9e}\t"
              f"{rate_text}{total_bytes / (total_ns * 1e-9):.9e}\t{mbu_text}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[2] == "--check":
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(sys.argv[1])
        expected = open(sys.argv[3]).read()
        if out.getvalue() != expected:
            sys.exit(f"{sys.argv[3]} differs from what the oracle computes now:\n{out.getvalue()}")
        print("matches")
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit(__doc__)
