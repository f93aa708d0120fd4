// Per-range instance timings from nsys nvtx_sum: the NVTX stage table of a run, GPU or not.
#include <algorithm>
#include <cmath>

#include "analysis/analysis_model.hpp"

namespace llmprof::detail {
namespace {

// nvtx_sum rounds Avg/Med to 0.1 ns and prints integer totals: allow that rounding, nothing more.
std::optional<std::string> contradiction(const NvtxRangeSummaryRow& row) {
  const auto& time = row.time;
  if (time.count <= 0) return "no instances";
  if (time.min_ns > time.max_ns) return "min > max";
  const double slack = 1.0;  // ns
  if (time.median_ns + slack < static_cast<double>(time.min_ns) ||
      time.median_ns - slack > static_cast<double>(time.max_ns)) {
    return "median outside [min, max]";
  }
  if (time.average_ns + slack < static_cast<double>(time.min_ns) ||
      time.average_ns - slack > static_cast<double>(time.max_ns)) {
    return "mean outside [min, max]";
  }
  const double expected_total = time.average_ns * static_cast<double>(time.count);
  if (std::fabs(expected_total - static_cast<double>(time.total_time_ns)) >
      0.1 * static_cast<double>(time.count) + slack) {
    return "total != mean x instances";
  }
  return std::nullopt;
}

}  // namespace

void build_range_timings(const AnalysisInputs& inputs, AnalysisReport& report) {
  if (!inputs.nsys || !inputs.nsys->ranges) {
    report.skipped.push_back("nvtx_ranges: no nsys nvtx_sum table");
    return;
  }
  for (const auto& row : *inputs.nsys->ranges) {
    if (auto why = contradiction(row)) {
      report.warnings.push_back("nvtx_sum row for range '" + qualified_range(row.range) + "' left out: " + *why);
      continue;
    }
    RangeTiming timing;
    timing.name = row.range.name;
    timing.domain = row.range.domain;
    timing.style = row.style;
    timing.instances = row.time.count;
    timing.total_ns = row.time.total_time_ns;
    timing.mean_ns = row.time.average_ns;
    timing.median_ns = row.time.median_ns;
    timing.min_ns = row.time.min_ns;
    timing.max_ns = row.time.max_ns;
    timing.stddev_ns = row.time.stddev_ns;
    report.range_timings.push_back(std::move(timing));
  }
  std::stable_sort(report.range_timings.begin(), report.range_timings.end(),
                   [](const RangeTiming& a, const RangeTiming& b) { return a.total_ns > b.total_ns; });
}

}  // namespace llmprof::detail
