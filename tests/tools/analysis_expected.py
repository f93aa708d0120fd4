#!/usr/bin/env python3
"""Independent expected figures for tests/unit/{kernel_selection,analysis}_test.cpp.

Reads the fixtures with Python's csv module only (no code shared with libllmprof) and prints the
figures the C++ tests assert: top-kernel selections, per-stage busy fractions, per-launch FLOP and
roofline percentages, MFU. Run once from the repository root and paste the output into the tests:
    python3 tests/tools/analysis_expected.py
"""
import collections
import csv
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "data"
H100 = ROOT / "h100-nsight-2025.3"


def rows(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==") and l.strip() != "ok"]
    return list(csv.DictReader(lines))


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def stage_kernels(path, stage):
    totals = collections.defaultdict(lambda: [0, 0])
    for r in rows(path):
        if r["NVTX Range"].split(":", 1)[-1] == stage and r["NVTX Range"] != "":
            totals[r["Kernel Name"]][0] += int(r["Total Time (ns)"])
            totals[r["Kernel Name"]][1] += int(r["Kern Inst"])
    return sorted(totals.items(), key=lambda kv: (-kv[1][0], kv[0]))


def selection(path, stage, n):
    kernels = stage_kernels(path, stage)
    total = sum(t for _, (t, _) in kernels)
    top = kernels[:n]
    print(f"selection {path.name} stage={stage} n={n}: stage_kernel_time_ns={total} "
          f"instances={sum(i for _, (_, i) in kernels)} distinct={len(kernels)}")
    for name, (t, i) in top:
        print(f"  {t} ns {i} inst share={t / total:.6f} {name[:70]}")
    covered = sum(t for _, (t, _) in top)
    matched = sum(i for _, (_, i) in top)
    print(f"  coverage={covered / total:.6f} launch_count(demangled)={matched - min(i for _, (_, i) in top) + 1}")


selection(H100 / "nsys" / "ns1_st_nvtx_kern_sum.csv", "decode", 5)
selection(H100 / "nsys" / "ns1_st_nvtx_kern_sum.csv", "prefill", 3)


def table_totals(path):
    table = rows(path)
    print(f"{path.name}: kernels={len(table)} total_time_ns={sum(int(r['Total Time (ns)']) for r in table)} "
          f"instances={sum(int(r['Instances']) for r in table)} first={table[0]['Name'][:50]} "
          f"first_ns={table[0]['Total Time (ns)']} second_ns={table[1]['Total Time (ns)']}")


table_totals(H100 / "nsys" / "ns1_st_cuda_gpu_kern_sum.csv")
table_totals(H100 / "nsys" / "ns2_st_cuda_gpu_kern_sum.csv")


# ---- per-launch roofline (ncu raw page) --------------------------------------------------------
TENSOR = {"bf16": ["sm__ops_path_tensor_src_bf16_dst_fp32.sum"], "fp16": ["sm__ops_path_tensor_src_fp16.sum"],
          "tf32": ["sm__ops_path_tensor_src_tf32_dst_fp32.sum"], "fp64_tensor": ["sm__ops_path_tensor_src_fp64.sum"],
          "fp8": ["sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8_sparsity_on.sum"]}
DENSE_PEAK = {"bf16": "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
              "fp16": "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained"}
CORE = [("fp32", "ffma", 2), ("fp32", "fadd", 1), ("fp32", "fmul", 1), ("fp64", "dfma", 2), ("fp64", "dadd", 1),
        ("fp64", "dmul", 1), ("fp16_cuda_core", "hfma", 4), ("fp16_cuda_core", "hadd", 2),
        ("fp16_cuda_core", "hmul", 2)]
SCALE = {"": 1, "ns": 1, "us": 1e3, "ms": 1e6, "Ghz": 1e9, "Mhz": 1e6, "hz": 1, "Gbyte/s": 1e9, "Tbyte/s": 1e12,
         "Mbyte/s": 1e6, "Kbyte/s": 1e3, "byte/s": 1, "byte/second": 1, "Kbyte/cycle": 1e3, "byte/cycle": 1,
         "inst/cycle": 1, "cycle": 1, "Kcycle": 1e3, "inst": 1, "%": 1}


def ncu_launches(path):
    lines = [l for l in open(path, newline="") if not l.startswith("==")]
    table = list(csv.reader(lines))
    header, units = table[0], table[1]
    launches = []
    for r in table[2:]:
        def get(name):
            i = header.index(name)
            return number(r[i]) * SCALE[units[i]]
        launch = {"name": r[header.index("Kernel Name")], "duration_ns": get("gpu__time_duration.sum")}
        flop = collections.Counter()
        for key, names in TENSOR.items():
            flop[key] += sum(get(n) for n in names)
        cycles = get("smsp__cycles_elapsed.avg")
        for key, op, weight in CORE:
            flop[key] += weight * get(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed") * cycles
        clock = get("sm__cycles_elapsed.avg.per_second")
        launch["flop"] = {k: v for k, v in flop.items() if v > 0}
        launch["total_flop"] = sum(flop.values())
        launch["peak"] = {k: get(m) * clock for k, m in DENSE_PEAK.items()}
        launch["peak"]["fp32"] = get("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained") * 2 * clock
        launch["peak"]["fp16_cuda_core"] = get("sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained") * 4 * clock
        launch["peak"]["fp64"] = get("sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained") * 2 * clock
        seconds = launch["duration_ns"] * 1e-9
        launch["dram_bytes"] = get("dram__bytes.sum.per_second") * seconds
        launch["dram_peak"] = get("dram__bytes.sum.peak_sustained") * get("dram__cycles_elapsed.avg.per_second")
        launch["pct_compute"] = sum(100 * f / seconds / launch["peak"][k] for k, f in launch["flop"].items())
        launch["pct_dram"] = 100 * launch["dram_bytes"] / seconds / launch["dram_peak"]
        launch["bound"] = ("latency" if launch["pct_compute"] < 30 and launch["pct_dram"] < 30 else
                           "compute" if launch["pct_compute"] >= launch["pct_dram"] else "memory")
        launches.append(launch)
    return launches


gemm = ncu_launches(H100 / "ncu" / "gemm_raw.csv")[0]
print(f"gemm: flop={gemm['total_flop']:.0f} by={gemm['flop']} duration_ns={gemm['duration_ns']:.3f} "
      f"achieved={gemm['total_flop'] / gemm['duration_ns'] * 1e9:.6e} peak_bf16={gemm['peak']['bf16']:.6e} "
      f"pct_compute={gemm['pct_compute']:.4f} dram_bytes={gemm['dram_bytes']:.6e} dram_peak={gemm['dram_peak']:.6e} "
      f"pct_dram={gemm['pct_dram']:.4f} ai={gemm['total_flop'] / gemm['dram_bytes']:.4f} bound={gemm['bound']}")

# A real page of ncu.set = "llmprof" (H100, ncu 2025.3.1, the 1b decode with the defaults): every figure from the
# section's metrics alone.
real = ncu_launches(ROOT / "ncu-llmprof-set" / "h100_1b_decode_raw.csv")
print(f"llmprof h100_1b_decode: launches={len(real)} total_flop={sum(l['total_flop'] for l in real):.6e} "
      f"dram_bytes={sum(l['dram_bytes'] for l in real):.6e} "
      f"duration_ns={sum(l['duration_ns'] for l in real):.1f} "
      f"compute_bound={sum(1 for l in real if l['bound'] == 'compute')} "
      f"memory_bound={sum(1 for l in real if l['bound'] == 'memory')} "
      f"latency_bound={sum(1 for l in real if l['bound'] == 'latency')}")

nc1 = ncu_launches(H100 / "ncu" / "nc1_raw.csv")
print(f"nc1: launches={len(nc1)} total_flop={sum(l['total_flop'] for l in nc1):.6e} "
      f"max_peak_fp16={max(l['peak']['fp16'] for l in nc1):.6e} max_dram_peak={max(l['dram_peak'] for l in nc1):.6e}")
for i in (2, 3):
    l = nc1[i]
    print(f"  launch {i}: {l['name'][:40]} flop={l['total_flop']:.6e} by={ {k: round(v) for k, v in l['flop'].items()} } "
          f"pct_compute={l['pct_compute']:.4f} pct_dram={l['pct_dram']:.4f} bound={l['bound']}")


def join_key(name):
    import re
    name = re.sub(r"\((?:unsigned |signed )*(?:char|short|int|long|bool)(?: long)?\)(?=-?\d)", "", name)
    name = re.sub(r"(?<![\w])(?:[A-Za-z_]\w*|<unnamed>)::", "", name)
    return " ".join(name.split())


per_kernel = collections.defaultdict(list)
for l in nc1:
    per_kernel[join_key(l["name"])].append(l)
print("nc1 per kernel (mean flop per launch, duration-weighted pct compute / dram, bound):")
for key, ls in sorted(per_kernel.items(), key=lambda kv: -sum(l["duration_ns"] for l in kv[1])):
    weight = sum(l["duration_ns"] for l in ls)
    pc = sum(l["pct_compute"] * l["duration_ns"] for l in ls) / weight
    pd = sum(l["pct_dram"] * l["duration_ns"] for l in ls) / weight
    bound = "latency" if pc < 30 and pd < 30 else "compute" if pc >= pd else "memory"
    print(f"  {len(ls)} launches flop/launch={sum(l['total_flop'] for l in ls) / len(ls):.6e} pct_compute={pc:.4f} "
          f"pct_dram={pd:.4f} bound={bound} {key[:50]}")

# ---- stages -----------------------------------------------------------------------------------


def stages(prefix):
    wall = {r["Range"]: int(r["Total Time (ns)"]) for r in rows(str(prefix) + "nvtx_sum.csv")}
    proj = {r["Range"]: int(r["Total Proj Time (ns)"]) for r in rows(str(prefix) + "nvtx_gpu_proj_sum.csv")}
    kern = collections.Counter()
    inst = collections.Counter()
    per_stage = collections.defaultdict(dict)
    for r in rows(str(prefix) + "nvtx_kern_sum.csv"):
        kern[r["NVTX Range"]] += int(r["Total Time (ns)"])
        inst[r["NVTX Range"]] += int(r["Kern Inst"])
        per_stage[r["NVTX Range"]][r["Kernel Name"]] = int(r["Kern Inst"])
    for name in wall:
        print(f"  stage {name}: wall_ns={wall[name]} proj_ns={proj[name]} kernel_ns={kern[name]} "
              f"instances={inst[name]} busy={kern[name] / max(wall[name], proj[name]):.6f}")
    return wall, per_stage


print("ns1 stages:")
ns1_wall, ns1_stage_kernels = stages(H100 / "nsys" / "ns1_st_")
print("nested stages:")
stages(ROOT / "analysis" / "nested" / "summary_")

# Decode FLOP and MFU from ns1 (instances) x nc1 (FLOP per launch), device peak = highest fp16
# dense peak among the nc1 launches.
flop = 0
covered = 0
for name, count in ns1_stage_kernels[":decode"].items():
    ls = per_kernel.get(join_key(name))
    if ls:
        flop += count * sum(l["total_flop"] for l in ls) / len(ls)
        covered += sum(int(r["Total Time (ns)"]) for r in rows(H100 / "nsys" / "ns1_st_nvtx_kern_sum.csv")
                       if r["NVTX Range"] == ":decode" and r["Kernel Name"] == name)
peak = max(l["peak"]["fp16"] for l in nc1)
wall = ns1_wall[":decode"]
print(f"decode: flop={flop:.6e} achieved={flop / wall * 1e9:.6e} mfu={flop / wall * 1e9 / peak:.6e} "
      f"while_busy={flop / 1435206 * 1e9:.6e} flop_coverage={covered / 1435206:.6f}")
# Workload second opinion (tests/data/analysis/workload_metrics_decode.json): 166232064 * 32 / 0.177371307
model = 166232064 * 32 / 0.177371307
print(f"decode workload: model_flop_per_s={model:.6e} mfu_workload={model / peak:.6e}")
