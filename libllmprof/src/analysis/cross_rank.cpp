// The cross-rank figures (see cross_rank.hpp for the definitions).
#include "llmprof/cross_rank.hpp"

#include <algorithm>
#include <map>

#include "llmprof/kernel_name.hpp"
#include "llmprof/nsys_stats.hpp"

namespace llmprof {
namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

bool named(const NvtxRangeInstance& range, const std::string& wanted) {
  return parse_nsys_range_name(range.name).name == wanted || range.name == wanted;
}

struct Interval {
  std::int64_t start, end;
};

// The union of intervals, sorted and disjoint.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  std::vector<Interval> result;
  for (const auto& interval : intervals) {
    if (!result.empty() && interval.start <= result.back().end)
      result.back().end = std::max(result.back().end, interval.end);
    else
      result.push_back(interval);
  }
  return result;
}

// Fraction of collective-kernel time during which a computation kernel also ran.
std::optional<double> overlap_of(const std::vector<GpuKernelInterval>& kernels) {
  std::vector<Interval> collective, compute;
  for (const auto& kernel : kernels)
    (is_collective_kernel(kernel.name) ? collective : compute).push_back({kernel.start_ns, kernel.end_ns});
  const std::vector<Interval> busy = merged(compute);
  std::int64_t total = 0, overlapped = 0;
  for (const auto& interval : merged(collective)) {
    total += interval.end - interval.start;
    for (const auto& other : busy) {
      if (other.start >= interval.end) break;
      overlapped +=
          std::max<std::int64_t>(0, std::min(interval.end, other.end) - std::max(interval.start, other.start));
    }
  }
  if (total == 0) return std::nullopt;
  return static_cast<double>(overlapped) / static_cast<double>(total);
}

RankFigures figures_of(const RankTimeline& timeline) {
  RankFigures figures;
  figures.rank = timeline.rank;
  figures.stage1_wall_s = timeline.stage1_wall_s;
  figures.nsys_wall_s = timeline.nsys_wall_s;
  if (timeline.kernel_time_ns) figures.kernel_time_s = static_cast<double>(*timeline.kernel_time_ns) * 1e-9;
  if (timeline.collective_kernel_time_ns)
    figures.collective_kernel_time_s = static_cast<double>(*timeline.collective_kernel_time_ns) * 1e-9;
  if (timeline.kernel_time_ns && timeline.collective_kernel_time_ns && *timeline.kernel_time_ns > 0) {
    figures.collective_share =
        static_cast<double>(*timeline.collective_kernel_time_ns) / static_cast<double>(*timeline.kernel_time_ns);
  }
  if (timeline.kernels) figures.comm_compute_overlap = overlap_of(*timeline.kernels);
  return figures;
}

void add_imbalance(CrossRankAnalysis& analysis, const char* figure, std::optional<double> RankFigures::*member) {
  std::vector<double> values;
  for (const auto& rank : analysis.ranks) {
    if (!(rank.*member)) return;  // only over every rank
    values.push_back(*(rank.*member));
  }
  if (values.size() < 2) return;
  Imbalance imbalance;
  imbalance.figure = figure;
  imbalance.median = median_of(values);
  const auto highest = std::max_element(values.begin(), values.end());
  imbalance.max = *highest;
  imbalance.max_rank = analysis.ranks[static_cast<std::size_t>(highest - values.begin())].rank;
  if (imbalance.median > 0) {
    imbalance.ratio = imbalance.max / imbalance.median;
    analysis.imbalance.push_back(imbalance);
  }
}

// Step starts relative to each rank's alignment event; empty (with a reason) when a rank lacks either.
std::vector<std::vector<double>> aligned_step_starts(const std::vector<RankTimeline>& ranks,
                                                     const CrossRankOptions& options, std::string& why_not) {
  std::vector<std::vector<double>> starts;
  for (const auto& rank : ranks) {
    if (!rank.ranges) {
      why_not = "rank " + std::to_string(rank.rank) + " has no NVTX range trace (nvtx_pushpop_trace)";
      return {};
    }
    std::vector<NvtxRangeInstance> sorted = *rank.ranges;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    auto anchor = std::find_if(sorted.begin(), sorted.end(),
                               [&](const auto& range) { return named(range, options.align_range); });
    if (anchor == sorted.end()) {
      why_not = "rank " + std::to_string(rank.rank) + " emitted no '" + options.align_range + "' range to align on";
      return {};
    }
    std::vector<double> rank_starts;
    for (const auto& range : sorted) {
      if (named(range, options.step_range) && range.start_ns >= anchor->end_ns) {
        rank_starts.push_back(static_cast<double>(range.start_ns - anchor->end_ns) * 1e-6);
      }
    }
    if (rank_starts.empty()) {
      why_not = "rank " + std::to_string(rank.rank) + " emitted no '" + options.step_range + "' range after '" +
                options.align_range + "'";
      return {};
    }
    starts.push_back(std::move(rank_starts));
  }
  return starts;
}

void add_step_figures(CrossRankAnalysis& analysis, const std::vector<RankTimeline>& ranks,
                      const CrossRankOptions& options) {
  std::string why_not;
  const auto starts = aligned_step_starts(ranks, options, why_not);
  if (starts.empty()) {
    analysis.not_computed.push_back("straggler and skew: " + why_not);
    return;
  }
  std::size_t steps = starts.front().size();
  for (const auto& rank : starts) steps = std::min(steps, rank.size());
  std::vector<double> lag_sum(starts.size(), 0), skews;
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<double> at_step;
    for (const auto& rank : starts) at_step.push_back(rank[step]);
    const double earliest = *std::min_element(at_step.begin(), at_step.end());
    for (std::size_t r = 0; r < starts.size(); ++r) lag_sum[r] += at_step[r] - earliest;
    skews.push_back(*std::max_element(at_step.begin(), at_step.end()) -
                    *std::min_element(at_step.begin(), at_step.end()));
  }
  for (std::size_t r = 0; r < starts.size(); ++r) {
    analysis.ranks[r].steps = starts[r].size();
    analysis.ranks[r].mean_step_start_lag_ms = lag_sum[r] / static_cast<double>(steps);
  }
  analysis.compared_steps = steps;
  analysis.skew_median_ms = median_of(skews);
  analysis.skew_max_ms = *std::max_element(skews.begin(), skews.end());
  const auto latest = std::max_element(lag_sum.begin(), lag_sum.end());
  analysis.straggler = analysis.ranks[static_cast<std::size_t>(latest - lag_sum.begin())].rank;
  analysis.straggler_lag_ms = *latest / static_cast<double>(steps);
}

}  // namespace

CrossRankAnalysis analyze_ranks(const std::vector<RankTimeline>& ranks, const CrossRankOptions& options) {
  CrossRankAnalysis analysis;
  analysis.alignment = "end of the first '" + options.align_range + "' range";
  for (const auto& rank : ranks) analysis.ranks.push_back(figures_of(rank));
  add_imbalance(analysis, "stage1_wall_s", &RankFigures::stage1_wall_s);
  add_imbalance(analysis, "nsys_wall_s", &RankFigures::nsys_wall_s);
  add_imbalance(analysis, "kernel_time_s", &RankFigures::kernel_time_s);
  if (ranks.size() < 2) {
    analysis.not_computed.push_back("straggler and skew: fewer than two ranks were profiled");
    return analysis;
  }
  add_step_figures(analysis, ranks, options);
  const bool any_overlap = std::any_of(analysis.ranks.begin(), analysis.ranks.end(),
                                       [](const auto& r) { return r.comm_compute_overlap.has_value(); });
  if (!any_overlap)
    analysis.not_computed.push_back(
        "communication/computation overlap: no rank has collective kernels in a GPU kernel trace (cuda_gpu_trace)");
  return analysis;
}

Result<RankTimeline> rank_timeline_from_nsys_stats(int rank, const std::filesystem::path& nsys_directory) {
  RankTimeline timeline;
  timeline.rank = rank;
  const std::filesystem::path prefix = nsys_directory / "summary";
  const auto kernels_file = nsys_stats_report_path(prefix, "cuda_gpu_kern_sum");
  if (std::filesystem::exists(kernels_file)) {
    auto rows = parse_nsys_kernel_summary(kernels_file);
    if (!rows) return rows.error();
    std::int64_t total = 0, collective = 0;
    for (const auto& row : *rows) {
      total += row.time.total_time_ns;
      if (is_collective_kernel(row.name)) collective += row.time.total_time_ns;
    }
    timeline.kernel_time_ns = total;
    timeline.collective_kernel_time_ns = collective;
  }
  const auto ranges_file = std::filesystem::path(prefix.string() + "_" + kNsysNvtxTraceReport + ".csv");
  if (std::filesystem::exists(ranges_file)) {
    auto ranges = parse_nsys_nvtx_trace(ranges_file);
    if (!ranges) return ranges.error();
    timeline.ranges = std::move(ranges.value());
  }
  const auto trace_file = std::filesystem::path(prefix.string() + "_" + kNsysGpuTraceReport + ".csv");
  if (std::filesystem::exists(trace_file)) {
    auto kernels = parse_nsys_gpu_trace(trace_file);
    if (!kernels) return kernels.error();
    timeline.kernels = std::move(kernels.value());
  }
  return timeline;
}

}  // namespace llmprof
