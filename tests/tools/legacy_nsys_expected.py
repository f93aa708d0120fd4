#!/usr/bin/env python3
"""Expected values for the nsys 2022.4 layouts in tests/data/debian-nsight-2022/nsys/synthetic_*.csv,
computed from the per-instance durations those rows summarise (independently of the C++ merge code)."""
import statistics

# gemm_kernel: shape 128x1x1 ran 1000, 2000, 3000 ns (avg 2000, sample stddev 1000); shape 64x1x1 ran 3000 ns.
gemm = [1000, 2000, 3000, 3000]
print("gemm_kernel total", sum(gemm), "count", len(gemm), "avg", statistics.mean(gemm),
      "min", min(gemm), "max", max(gemm), "stddev %.6f" % statistics.stdev(gemm))
# softmax_kernel: 400, 600 ns (one shape, unchanged): sample stddev 141.42
print("softmax_kernel stddev %.4f" % statistics.stdev([400, 600]))
# nvtxgpuproj trace rows per range: projected durations, original durations, GPU ops, levels, children.
rows = {"decode": [(800, 1000, 6, 0, 2)], "decode_step": [(300, 400, 3, 1, 0), (350, 450, 3, 1, 0)],
        "prefill": [(500, 700, 10, 0, 0)]}
for name, instances in rows.items():
    print(name, "proj", sum(r[0] for r in instances), "range", sum(r[1] for r in instances),
          "instances", len(instances), "ops", sum(r[2] for r in instances),
          "level", statistics.mean(r[3] for r in instances), "children", statistics.mean(r[4] for r in instances))
