// Per-range instance timings from nsys nvtx_sum: the NVTX stage table of a run, GPU or not, as report.json's
// nvtx_ranges records.
#include <algorithm>
#include <cmath>

#include "analysis/analysis_model.hpp"

namespace llmprof::detail {
namespace {

// nvtx_sum rounds Avg/Med to 0.1 ns and prints integer totals: allow that rounding, nothing more. min > max and
// negative figures never get here: the nsys stats reader refuses such a table (parse/nsys_stats.cpp).
std::optional<std::string> contradiction(const NvtxRangeSummaryRow& row) {
  const auto& time = row.time;
  if (time.count <= 0) return "no instances";
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

void build_nvtx_ranges(const AnalysisInputs& inputs, AnalysisReport& report) {
  if (!inputs.nsys || !inputs.nsys->ranges) {
    report.skipped.push_back("nvtx_ranges: no nsys nvtx_sum table");
    return;
  }
  for (const auto& row : *inputs.nsys->ranges) {
    if (auto why = contradiction(row)) {
      report.warnings.push_back("nvtx_sum row for range '" + qualified_range(row.range) + "' left out: " + *why);
      continue;
    }
    // report.json's record itself (ReportRangeTiming), filled once from the parser's row.
    ReportRangeTiming& range = report.nvtx_ranges.emplace_back();
    range.name = row.range.name;
    range.domain = row.range.domain;
    range.style = row.style;
    range.instances = row.time.count;
    range.total_ns = row.time.total_time_ns;
    range.mean_ns = row.time.average_ns;
    range.p50_ns = row.time.median_ns;
    range.min_ns = row.time.min_ns;
    range.max_ns = row.time.max_ns;
    range.stddev_ns = row.time.stddev_ns;
    range.source = "nsys nvtx_sum";  // p99 and its source come from the timeline (analysis_timeline.cpp)
  }
  std::stable_sort(report.nvtx_ranges.begin(), report.nvtx_ranges.end(),
                   [](const ReportRangeTiming& a, const ReportRangeTiming& b) { return a.total_ns > b.total_ns; });
}

}  // namespace llmprof::detail
