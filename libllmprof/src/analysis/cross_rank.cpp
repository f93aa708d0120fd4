// The cross-rank figures (see cross_rank.hpp for the definitions).
#include "llmprof/cross_rank.hpp"

#include <algorithm>
#include <map>

#include "analysis/step_rule.hpp"
#include "analysis/time_intervals.hpp"
#include "llmprof/kernel_name.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/timeline.hpp"
#include "parse/nsys_sqlite.hpp"

namespace llmprof {
namespace {

using detail::merge_intervals;
using detail::TimeInterval;

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

bool named(const NvtxRangeInstance& range, const std::string& wanted) {
  return parse_nsys_range_name(range.name).name == wanted || range.name == wanted;
}

// The instances of each range name that count as steps (analysis/step_rule.hpp); `nested` counts the rest.
std::vector<NvtxRangeInstance> outermost_of_each_name(std::vector<NvtxRangeInstance> ranges, std::int64_t& nested) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < ranges.size(); ++i) by_name[ranges[i].name].push_back(i);
  std::vector<bool> keep(ranges.size(), true);
  for (const auto& [name, indices] : by_name) {
    std::vector<detail::RangeSpan> spans;
    for (const std::size_t i : indices) spans.push_back({ranges[i].thread, ranges[i].start_ns, ranges[i].end_ns});
    const std::vector<bool> outermost = detail::outermost_spans(spans);
    for (std::size_t k = 0; k < indices.size(); ++k) keep[indices[k]] = outermost[k];
  }
  std::vector<NvtxRangeInstance> kept;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (keep[i])
      kept.push_back(std::move(ranges[i]));
    else
      ++nested;
  }
  return kept;
}

// Fraction of collective-kernel time during which a computation kernel also ran.
std::optional<double> overlap_of(const std::vector<GpuKernelInterval>& kernels) {
  std::vector<TimeInterval> collective, compute;
  for (const auto& kernel : kernels)
    (is_collective_kernel(kernel.name) ? collective : compute).emplace_back(kernel.start_ns, kernel.end_ns);
  const std::vector<TimeInterval> busy = merge_intervals(std::move(compute));
  std::int64_t total = 0, overlapped = 0;
  for (const auto& [start, end] : merge_intervals(std::move(collective))) {
    total += end - start;
    for (const auto& [other_start, other_end] : busy) {
      if (other_start >= end) break;
      overlapped += std::max<std::int64_t>(0, std::min(end, other_end) - std::max(start, other_start));
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

using RangeList = std::optional<std::vector<NvtxRangeInstance>> RankTimeline::*;

// The end of each rank's first collective kernel, when every rank has one: a collective ends at the same
// moment on every rank (none can finish before the last one joins), whatever each rank's CPU did before.
// Measured on two H200s (1b TP decode): under a capture gated on `decode`, the ranks' `decode` ranges
// open ~30 ms apart relative to their GPU work (each rank's nsys starts its capture there), which
// aligned on that range made a rank that waited look 28 ms late.
std::vector<std::int64_t> first_collective_ends(const std::vector<RankTimeline>& ranks) {
  std::vector<std::int64_t> anchors;
  for (const auto& rank : ranks) {
    if (!rank.kernels) return {};
    const GpuKernelInterval* first = nullptr;
    for (const auto& kernel : *rank.kernels) {
      if (is_collective_kernel(kernel.name) && (first == nullptr || kernel.start_ns < first->start_ns)) first = &kernel;
    }
    if (first == nullptr) return {};
    anchors.push_back(first->end_ns);
  }
  return anchors;
}

// Each rank's time zero on its own clock: the end of its first collective kernel; otherwise the end of
// the first `align_range`, or, when some rank lacks it, the start of the first `fallback_align_range`;
// empty (with a reason) when none is on every rank.
std::vector<std::int64_t> alignment_anchors(const std::vector<RankTimeline>& ranks, const CrossRankOptions& options,
                                            std::string& alignment, std::string& why_not) {
  const auto first = [](const RankTimeline& rank, const std::string& name) -> const NvtxRangeInstance* {
    const NvtxRangeInstance* found = nullptr;
    for (const auto& range : *rank.ranges) {
      if (named(range, name) && (found == nullptr || range.start_ns < found->start_ns)) found = &range;
    }
    return found;
  };
  for (const auto& rank : ranks) {
    if (!rank.ranges) {
      why_not = "rank " + std::to_string(rank.rank) + " has no NVTX range trace (nvtx_pushpop_trace or SQLite export)";
      return {};
    }
  }
  if (auto anchors = first_collective_ends(ranks); !anchors.empty()) {
    alignment = "end of the first collective (NCCL) kernel";
    return anchors;
  }
  for (const bool fallback : {false, true}) {
    const std::string& name = fallback ? options.fallback_align_range : options.align_range;
    if (name.empty()) continue;
    std::vector<std::int64_t> anchors;
    for (const auto& rank : ranks) {
      const NvtxRangeInstance* anchor = first(rank, name);
      if (anchor == nullptr) {
        if (!fallback)
          why_not = "rank " + std::to_string(rank.rank) + " emitted no '" + name + "' range to align on";
        else
          why_not += ", nor a '" + name + "' range";
        break;
      }
      anchors.push_back(fallback ? anchor->start_ns : anchor->end_ns);
    }
    if (anchors.size() == ranks.size()) {
      alignment = (fallback ? "start of the first '" : "end of the first '") + name + "' range";
      why_not.clear();
      return anchors;
    }
  }
  return {};
}

// Step starts (from `list`: CPU ranges or their GPU side) relative to each rank's anchor; empty (with
// a reason) when a rank has no step after its anchor.
std::vector<std::vector<double>> aligned_step_starts(const std::vector<RankTimeline>& ranks,
                                                     const std::vector<std::int64_t>& anchors,
                                                     const CrossRankOptions& options, RangeList list,
                                                     std::string& why_not) {
  std::vector<std::vector<double>> starts;
  for (std::size_t index = 0; index < ranks.size(); ++index) {
    const RankTimeline& rank = ranks[index];
    if (!(rank.*list)) {
      why_not = "rank " + std::to_string(rank.rank) + " has no such ranges";
      return {};
    }
    std::vector<double> rank_starts;
    for (const auto& range : *(rank.*list)) {
      if (named(range, options.step_range) && range.start_ns >= anchors[index])
        rank_starts.push_back(static_cast<double>(range.start_ns - anchors[index]) * 1e-6);
    }
    std::sort(rank_starts.begin(), rank_starts.end());
    if (rank_starts.empty()) {
      why_not = "rank " + std::to_string(rank.rank) + " emitted no '" + options.step_range + "' range after its " +
                "alignment event";
      return {};
    }
    starts.push_back(std::move(rank_starts));
  }
  return starts;
}

void add_step_figures(CrossRankAnalysis& analysis, const std::vector<RankTimeline>& ranks,
                      const CrossRankOptions& options) {
  std::string why_not;
  const std::vector<std::int64_t> anchors = alignment_anchors(ranks, options, analysis.alignment, why_not);
  std::vector<std::vector<double>> starts;
  if (!anchors.empty()) {
    // GPU starts when every rank has them for its steps; otherwise the CPU starts of the same ranges.
    starts = aligned_step_starts(ranks, anchors, options, &RankTimeline::gpu_ranges, why_not);
    analysis.step_basis = "GPU";
    if (starts.empty()) {
      why_not.clear();
      starts = aligned_step_starts(ranks, anchors, options, &RankTimeline::ranges, why_not);
      analysis.step_basis = "CPU";
    }
  }
  if (starts.empty()) {
    analysis.step_basis.clear();
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
  analysis.latest_rank = analysis.ranks[static_cast<std::size_t>(latest - lag_sum.begin())].rank;
  analysis.latest_lag_ms = *latest / static_cast<double>(steps);
  const auto& earliest =
      starts[static_cast<std::size_t>(std::min_element(lag_sum.begin(), lag_sum.end()) - lag_sum.begin())];
  std::vector<double> intervals;
  for (std::size_t step = 1; step < steps; ++step) intervals.push_back(earliest[step] - earliest[step - 1]);
  if (!intervals.empty()) analysis.step_period_ms = median_of(intervals);
  // With one compared step there is no period to weigh the lag against: name the latest rank then.
  if (!analysis.step_period_ms || *analysis.latest_lag_ms >= kStragglerStepShare * *analysis.step_period_ms) {
    analysis.straggler = analysis.latest_rank;
    analysis.straggler_lag_ms = analysis.latest_lag_ms;
  }
}

}  // namespace

CrossRankAnalysis analyze_ranks(const std::vector<RankTimeline>& ranks, const CrossRankOptions& options) {
  CrossRankAnalysis analysis;
  std::int64_t nested = 0, unclosed = 0;
  for (const auto& rank : ranks) {
    analysis.ranks.push_back(figures_of(rank));
    nested += rank.nested_set_aside;
    unclosed += rank.unclosed_ranges;
  }
  analysis.step_rule = detail::step_rule_note(nested, unclosed);
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
    timeline.ranges = outermost_of_each_name(std::move(ranges.value()), timeline.nested_set_aside);
  }
  const auto trace_file = std::filesystem::path(prefix.string() + "_" + kNsysGpuTraceReport + ".csv");
  if (std::filesystem::exists(trace_file)) {
    auto kernels = parse_nsys_gpu_trace(trace_file);
    if (!kernels) return kernels.error();
    timeline.kernels = std::move(kernels.value());
  }
  return timeline;
}

Result<RankTimeline> rank_timeline_from_sqlite(int rank, const std::filesystem::path& sqlite_export,
                                               const TimelineOptions& options, TimelineReport* engine_report) {
  auto report = analyze_timeline(sqlite_export, options);
  if (!report) return report.error();
  if (engine_report) *engine_report = report.value();
  RankTimeline timeline;
  timeline.rank = rank;
  timeline.unclosed_ranges = report->unclosed_ranges;
  std::vector<NvtxRangeInstance> ranges, gpu_ranges;
  for (const TimelineStage& stage : report->stages) {
    const detail::StepInstances counted = detail::step_instances(stage);
    timeline.nested_set_aside += counted.nested;
    for (const TimelineInstance* instance : counted.counted) {
      ranges.push_back({stage.name, instance->cpu_start_ns, instance->cpu_end_ns, instance->thread});
      if (instance->gpu_start_ns && instance->gpu_end_ns)
        gpu_ranges.push_back({stage.name, *instance->gpu_start_ns, *instance->gpu_end_ns, instance->thread});
    }
  }
  timeline.ranges = std::move(ranges);
  if (!gpu_ranges.empty()) timeline.gpu_ranges = std::move(gpu_ranges);

  auto reader = detail::NsysSqliteReader::open(sqlite_export);
  if (!reader) return reader.error();
  if (reader->schema().has_kernels) {
    std::vector<GpuKernelInterval> kernels;
    std::map<std::int64_t, std::string> names;  // StringIds lookups, once per distinct kernel
    auto visited = reader->for_each_gpu_activity([&](const detail::GpuActivityRow& row) {
      if (row.kind != detail::GpuActivityKind::kernel) return;
      auto [name, inserted] = names.try_emplace(row.name_id);
      if (inserted) name->second = reader->string_value(row.name_id);
      kernels.push_back({name->second, row.start_ns, row.end_ns});
    });
    if (!visited) return visited.error();
    std::int64_t total = 0, collective = 0;
    for (const auto& kernel : kernels) {
      total += kernel.end_ns - kernel.start_ns;
      if (is_collective_kernel(kernel.name)) collective += kernel.end_ns - kernel.start_ns;
    }
    timeline.kernel_time_ns = total;
    timeline.collective_kernel_time_ns = collective;
    timeline.kernels = std::move(kernels);
  }
  return timeline;
}

}  // namespace llmprof
