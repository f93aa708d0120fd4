// The timeline engine (nsys SQLite reader + stage figures) on a mutated SQLite file. Most inputs are
// rejected by SQLite itself; seeds from tests/data/nsys-sqlite drive the schema checks and the passes.
//
// Invariants: no crash / leak / UB; every error names the input file; on success every stage has
// instances, ordered percentiles, a busy fraction within [0, 1] and GPU busy time within its span. The engine
// steps of the same file, from its ranges (analyze_step_kinds) and cut at its synchronisation (infer_sync_steps):
// the kinds' steps never outnumber the window's, each kind's percentiles are ordered, its GPU busy time is no
// more than its GPU time, and its share is within [0, 1]. The nsys stats tables of the same file
// (nsys_stats_from_sqlite): every summary row has min <= max, count >= 1 and a total no smaller than count x min;
// every projection has at least one instance and one GPU operation. Its GPU-metrics samples
// (read_gpu_metric_samples): a positive period, ascending times, one value per metric and time; the sampled
// figures attached to the stages are fractions within [0, 1] with ordered percentiles. Its placement
// (read_capture_placement) and per-rank sampling of each stage from its own samples, and from them moved 3 ms onto
// another capture's clock (sample_rank_steps): kept and left-out steps add up to the stage's instances, shares
// within [0, 1], bytes per step not negative.
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <fstream>
#include <string>
#include <tuple>
#include <algorithm>

#include "fuzz_support.hpp"
#include "parse/nsys_sqlite_window.hpp"
#include "llmprof/capture_placement.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/rank_sampling.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/sampled_utilisation.hpp"
#include "llmprof/step_kinds.hpp"
#include "llmprof/sync_steps.hpp"
#include "llmprof/timeline.hpp"

namespace {

// SQLite reads files, not memory: one file per fuzzing process, rewritten for each input, and its
// directory removed when the process exits normally.
class InputFile {
 public:
  InputFile()
      : directory_(std::filesystem::temp_directory_path() / ("llmprof-fuzz-sqlite-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(directory_);
  }
  ~InputFile() {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The input as the file's whole content. The name is kSourceName so errors can be checked for it.
  std::filesystem::path write(const std::uint8_t* data, std::size_t size) const {
    const auto file = directory_ / llmprof::fuzz::kSourceName;
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return file;
  }

 private:
  std::filesystem::path directory_;
};

void check_stage(const llmprof::TimelineStage& stage) {
  const auto& duration = stage.cpu_duration;
  const std::string name = stage.qualified_name();
  LLMPROF_FUZZ_CHECK(duration.count > 0 && static_cast<std::size_t>(duration.count) == stage.instances.size(), name);
  LLMPROF_FUZZ_CHECK(
      duration.p50_ns <= duration.p90_ns && duration.p90_ns <= duration.p99_ns && duration.p99_ns <= duration.max_ns,
      name);
  LLMPROF_FUZZ_CHECK(!stage.gpu_busy_fraction || (*stage.gpu_busy_fraction >= 0 && *stage.gpu_busy_fraction <= 1),
                     name);
  LLMPROF_FUZZ_CHECK(stage.gpu_busy_ns >= 0 && stage.gpu_busy_ns <= stage.span_ns, name);
}

void check_steps(const llmprof::StepKindReport& steps) {
  std::int64_t counted = 0;
  for (const auto& kind : steps.kinds) {
    counted += kind.count;
    const auto& time = kind.step_time;
    LLMPROF_FUZZ_CHECK(time.p50_ns <= time.p90_ns && time.p90_ns <= time.p99_ns, kind.name);
    LLMPROF_FUZZ_CHECK(kind.gpu_busy_ns >= 0 && kind.gpu_busy_ns <= kind.gpu_time_ns, kind.name);
    LLMPROF_FUZZ_CHECK(!kind.gpu_time_share || (*kind.gpu_time_share >= 0 && *kind.gpu_time_share <= 1), kind.name);
  }
  LLMPROF_FUZZ_CHECK(steps.steps >= 0 && steps.steps_left_out >= 0, "steps");
  // Kinds that are the steps (standing alone, or cut at synchronisation) hold every step exactly once; under a step
  // range a step may hold no kind, or two.
  if (!steps.inferred.empty() || steps.step_range.empty()) LLMPROF_FUZZ_CHECK(counted == steps.steps, "kinds' steps");
}

template <typename Rows>
void check_summary(const std::optional<Rows>& rows, const char* table) {
  if (!rows) return;
  for (const auto& row : *rows) {
    const auto& time = row.time;
    LLMPROF_FUZZ_CHECK(time.count >= 1 && time.min_ns <= time.max_ns && time.min_ns >= 0, table);
    LLMPROF_FUZZ_CHECK(time.total_time_ns >= time.min_ns * time.count, table);
  }
}

void check_stats(const llmprof::NsysStats& stats) {
  check_summary(stats.kernels, "cuda_gpu_kern_sum");
  check_summary(stats.ranges, "nvtx_sum");
  check_summary(stats.cuda_api, "cuda_api_sum");
  check_summary(stats.memory_operations, "cuda_gpu_mem_time_sum");
  if (stats.range_kernels) {
    for (const auto& row : *stats.range_kernels) LLMPROF_FUZZ_CHECK(row.kernel_instances >= 1, "nvtx_kern_sum");
  }
  if (stats.range_projections) {
    for (const auto& row : *stats.range_projections)
      LLMPROF_FUZZ_CHECK(row.range_instances >= 1 && row.total_gpu_operations >= 1, "nvtx_gpu_proj_sum");
  }
}


void check_samples(const llmprof::GpuMetricSamples& samples, const llmprof::TimelineReport& timeline) {
  LLMPROF_FUZZ_CHECK(samples.period_ns > 0, "sample period " + std::to_string(samples.period_ns));
  LLMPROF_FUZZ_CHECK(std::is_sorted(samples.timestamps_ns.begin(), samples.timestamps_ns.end()), "sample times unsorted");
  const auto n = samples.timestamps_ns.size();
  LLMPROF_FUZZ_CHECK(samples.sm_active.size() == n && samples.tensor_active.size() == n &&
                         samples.dram_read.size() == n && samples.dram_write.size() == n,
                     "a metric without a value per sample time");
  llmprof::AnalysisReport report;
  for (const auto& stage : timeline.stages) report.stages.push_back(llmprof::ReportStage{.name = stage.name, .domain = stage.domain, .steps = 1.0});
  llmprof::attach_sampled_utilisation(timeline, samples, report);
  for (const auto& stage : report.stages) {
    for (const auto* figure : {&stage.sampled_sm_active, &stage.sampled_dram_read}) {
      const auto& [mean, p10, p50, p90] = *figure;
      if (!mean) continue;
      LLMPROF_FUZZ_CHECK(*mean >= 0 && *mean <= 1 && *p10 <= *p50 && *p50 <= *p90 && *p90 <= 1,
                         "sampled figures of " + stage.name + " out of [0, 1] or unordered");
    }
    if (stage.sampled_mbu) LLMPROF_FUZZ_CHECK(*stage.sampled_mbu >= 0 && *stage.sampled_mbu <= 2, "sampled MBU");
  }
}

void check_rank_sampling(const llmprof::GpuMetricSamples& samples, const llmprof::TimelineReport& timeline,
                         const llmprof::CapturePlacement& placement) {
  llmprof::CapturePlacement moved = placement;
  if (moved.clock_origin_utc_ns) *moved.clock_origin_utc_ns -= 3'000'000;
  const llmprof::CapturePlacement& other = moved;
  const llmprof::SampledCapture source{0, &samples, placement};
  for (const auto& stage : timeline.stages) {
    for (const auto& [rank, own] : {std::pair{0, &placement}, std::pair{1, &other}}) {
      const auto sampling = llmprof::sample_rank_steps(timeline, stage.qualified_name(), rank, *own, &source, "");
      const llmprof::SampledStage& figures = sampling.figures;
      LLMPROF_FUZZ_CHECK(sampling.steps + sampling.steps_outside == std::int64_t(stage.instances.size()) ||
                             figures.samples == 0,
                         "rank sampling of " + stage.name + " lost steps");
      for (const auto& share : {figures.sm_active.mean, figures.tensor_active.mean, figures.mbu})
        if (share) LLMPROF_FUZZ_CHECK(*share >= 0 && *share <= 1, "rank sampling share out of [0, 1]");
      if (figures.dram_bytes_per_step)
        LLMPROF_FUZZ_CHECK(*figures.dram_bytes_per_step >= 0, "negative sampled bytes per step");
    }
  }
}

}  // namespace

// The same file restricted to a window, as the pipeline restricts a whole-run capture to the workload's own window.
// A window over every timestamp removes no row and leaves the timeline's GPU activities as they were; one that ends
// where it starts, at 0, leaves no more of them. A failure is said, never a crash.
void check_restricted(const std::filesystem::path& file, const llmprof::Result<llmprof::TimelineReport>& report) {
  using Limits = std::numeric_limits<std::int64_t>;
  const auto copy = file.parent_path() / "restricted.sqlite";
  for (const llmprof::detail::ExportWindow window : {llmprof::detail::ExportWindow{Limits::min(), Limits::max()},
                                                     llmprof::detail::ExportWindow{0, 0}}) {
    const auto restricted = llmprof::detail::restrict_export_to_window(file, copy, window);
    if (!restricted) {
      LLMPROF_FUZZ_CHECK(!restricted.error().message.empty(), restricted.error().describe());
      continue;
    }
    const bool everything = window.start_ns == Limits::min();
    if (everything) LLMPROF_FUZZ_CHECK(restricted->rows_removed == 0, std::to_string(restricted->rows_removed));
    const auto again = llmprof::analyze_timeline(copy);
    if (!again || !report) continue;
    if (everything)
      LLMPROF_FUZZ_CHECK(again->gpu_activities == report->gpu_activities, std::to_string(again->gpu_activities));
    else
      LLMPROF_FUZZ_CHECK(again->gpu_activities <= report->gpu_activities, std::to_string(again->gpu_activities));
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const InputFile input;
  const auto file = input.write(data, size);
  const auto report = llmprof::analyze_timeline(file);
  LLMPROF_FUZZ_CHECK_ERROR(report);
  if (report) {
    for (const auto& stage : report->stages) check_stage(stage);
    if (const auto steps = llmprof::analyze_step_kinds(*report)) check_steps(*steps);
  }
  const auto inferred = llmprof::infer_sync_steps(file);
  LLMPROF_FUZZ_CHECK_ERROR(inferred);
  if (inferred && *inferred) check_steps(**inferred);
  const auto stats = llmprof::nsys_stats_from_sqlite(file);
  LLMPROF_FUZZ_CHECK_ERROR(stats);
  if (stats) check_stats(*stats);
  const auto samples = llmprof::read_gpu_metric_samples(file);
  LLMPROF_FUZZ_CHECK_ERROR(samples);
  if (samples && *samples && report) check_samples(**samples, *report);
  const auto placement = llmprof::read_capture_placement(file);
  LLMPROF_FUZZ_CHECK_ERROR(placement);
  if (placement && samples && *samples && report) check_rank_sampling(**samples, *report, *placement);
  check_restricted(file, report);
  return 0;
}
