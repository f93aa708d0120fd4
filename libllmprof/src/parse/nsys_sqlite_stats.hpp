// What nsys_stats_from_sqlite's two files share: the statistics nsys stats prints for a group of durations,
// and the two tables that attribute GPU work to NVTX ranges (nsys_sqlite_range_stats.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "llmprof/nsys_stats.hpp"
#include "parse/nsys_sqlite.hpp"

namespace llmprof::detail {

// x rounded to one decimal, half away from zero: SQLite's round(x, 1), which every nsys stats report
// applies to its averages, medians, standard deviations and percentages (2022.4 reports/*.py; 2025.3 CSVs).
double round_to_tenth(double value);

// Total, count, min, max, and the rounded average, median and sample standard deviation (0 for one
// value) of `durations_ns`, which is sorted in place; time_percent is left 0.
NsysTimeStatistics summarize_durations(std::vector<std::int64_t>& durations_ns);

// nvtx_kern_sum folded to one row per (range, style, kernel), as load_nsys_stats folds the CSV.
Result<std::vector<NvtxKernelRow>> read_nvtx_kernel_summary(const NsysSqliteReader& reader,
                                                            const std::vector<NvtxRangeInstance>& ranges);

// nvtx_gpu_proj_sum: one row per (range, style) over the instances that launched GPU work.
Result<std::vector<NvtxGpuProjectionRow>> read_nvtx_gpu_projection(const NsysSqliteReader& reader,
                                                                   const std::vector<NvtxRangeInstance>& ranges);

}  // namespace llmprof::detail
