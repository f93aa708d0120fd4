// The cross-rank view read back from a run directory (see rank_analysis.hpp).
#include "llmprof/rank_analysis.hpp"

#include <algorithm>

#include "core/atomic_file.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/run_layout.hpp"
#include "pipeline/rank_files.hpp"

namespace llmprof {
namespace fs = std::filesystem;

namespace {

fs::path rank_directory(const fs::path& main, int rank) { return main / RunLayout::rank_directory(rank); }

std::optional<double> rank_wall_s(const RunManifest& manifest, Stage stage, int rank) {
  for (const auto& record : manifest.stages) {
    if (record.name != to_string(stage)) continue;
    for (const auto& rank_record : record.ranks) {
      if (rank_record.rank == rank && rank_record.status == StageStatus::ok) return rank_record.duration_s;
    }
  }
  return std::nullopt;
}

// What per-rank sampling needs of one rank's capture.
struct RankCapture {
  int rank = 0;
  std::optional<TimelineReport> timeline;
  CapturePlacement placement;
  std::optional<GpuMetricSamples> samples;
  std::string samples_withheld;  // why its export's samples are not used (the reader's error); "" when read or none
  std::string host;  // from the rank's nsys status.json; "" when unknown
};

void read_sampling_inputs(const fs::path& main, const fs::path& sqlite, RankCapture& capture,
                          std::vector<std::string>& warnings) {
  const std::string rank = "rank " + std::to_string(capture.rank);
  if (auto placement = read_capture_placement(sqlite); placement) capture.placement = std::move(placement.value());
  if (auto samples = read_gpu_metric_samples(sqlite); !samples) {
    warnings.push_back("per-rank sampling: " + rank + ": " + samples.error().describe());
    capture.samples_withheld = samples.error().describe();
  } else
    capture.samples = std::move(samples.value());
  if (auto status = detail::read_rank_status(main / RunLayout::rank_stage_status(capture.rank, Stage::nsys))) {
    capture.host = status->host;
    // A capture that sampled one GPU by nsys's id: the export may list every GPU the process saw, so which one was
    // sampled is what nsys's own listing says, as rank-exec recorded it; it wins over the export's guess.
    if (capture.samples && capture.samples->other_gpus == 0 && !status->gpu_metrics_bus.empty())
      capture.samples->gpu_bus = status->gpu_metrics_bus;
  }
}

// The capture whose samples measure `rank`: its own, else one on its host that sampled its GPU (by bus), else
// the only one on its host (sample_rank_steps then says why it cannot be used). nullptr, with `why`, for none.
const RankCapture* sampling_source(const RankCapture& rank, const std::vector<RankCapture>& captures,
                                   std::string& why) {
  if (rank.samples) return &rank;
  if (!rank.samples_withheld.empty()) {  // its own capture sampled, but its samples cannot be used: say why
    why = "withheld: " + rank.samples_withheld;
    return nullptr;
  }
  std::vector<const RankCapture*> on_host;
  for (const auto& other : captures)
    if (other.samples && !rank.host.empty() && other.host == rank.host) on_host.push_back(&other);
  for (const RankCapture* other : on_host)
    if (!rank.placement.kernel_gpu_buses.empty() && other->samples->gpu_bus == rank.placement.kernel_gpu_buses.front())
      return other;
  if (on_host.size() == 1) return on_host.front();
  why = on_host.empty() ? "no capture on this rank's host" + (rank.host.empty() ? "" : " (" + rank.host + ")") +
                              " sampled GPU metrics (see ranks/r" + std::to_string(rank.rank) +
                              "/nsys/status.json, gpu_metrics_note)"
                        : std::to_string(on_host.size()) + " captures on this rank's host sampled, none the GPU it ran on";
  return nullptr;
}

// Whether any capture sampled, its samples read or withheld (then each rank's note says why, rather than the
// section vanishing).
bool any_sampled(const std::vector<RankCapture>& captures) {
  return std::any_of(captures.begin(), captures.end(), [](const RankCapture& capture) {
    return capture.samples.has_value() || !capture.samples_withheld.empty();
  });
}

// The source of `rank`'s samples as sample_rank_steps and samples_for_rank take it (nullopt: none, `why` says so).
std::optional<SampledCapture> sampled_capture_of(const RankCapture& rank, const std::vector<RankCapture>& captures,
                                                 std::string& why) {
  const RankCapture* source = sampling_source(rank, captures, why);
  if (!source) return std::nullopt;
  SampledCapture sampled{source->rank, &*source->samples, source->placement, {}};
  for (const auto& other : captures)
    if (other.rank != source->rank && other.host == source->host && !source->samples->gpu_bus.empty() &&
        other.placement.kernel_gpu_buses == std::vector<std::string>{source->samples->gpu_bus})
      sampled.sharers.push_back(other.rank);
  return sampled;
}

// Each rank's step range from GPU-metrics samples, where any capture of the run sampled.
void attach_rank_sampling(const std::vector<RankCapture>& captures, const std::string& step_range,
                          CrossRankAnalysis& analysis) {
  if (!any_sampled(captures)) return;
  for (auto& figures : analysis.ranks) {
    const auto capture = std::find_if(captures.begin(), captures.end(),
                                      [&](const RankCapture& candidate) { return candidate.rank == figures.rank; });
    if (capture == captures.end() || !capture->timeline) continue;
    std::string why;
    const std::optional<SampledCapture> sampled = sampled_capture_of(*capture, captures, why);
    figures.sampled = sample_rank_steps(*capture->timeline, step_range, capture->rank, capture->placement,
                                        sampled ? &*sampled : nullptr, why);
  }
}

std::vector<RankCapture> read_rank_captures(const fs::path& main, int world, std::vector<std::string>& warnings) {
  std::vector<RankCapture> captures;
  for (int rank = 0; rank < world; ++rank) {
    const fs::path sqlite = rank_directory(main, rank) / RunLayout::nsys_directory() / RunLayout::nsys_sqlite().filename();
    if (!fs::exists(sqlite)) continue;
    RankCapture& capture = captures.emplace_back();
    capture.rank = rank;
    read_sampling_inputs(main, sqlite, capture, warnings);
  }
  return captures;
}

}  // namespace

std::optional<AttributedSamples> attributed_samples_of_rank(const fs::path& main_directory, const RunManifest& manifest,
                                                           int rank, std::vector<std::string>& warnings) {
  const std::vector<RankCapture> captures = read_rank_captures(main_directory, world_size_of_run(manifest), warnings);
  if (!any_sampled(captures)) return std::nullopt;
  const auto capture = std::find_if(captures.begin(), captures.end(),
                                    [&](const RankCapture& candidate) { return candidate.rank == rank; });
  if (capture == captures.end()) return std::nullopt;
  std::string why;
  const std::optional<SampledCapture> sampled = sampled_capture_of(*capture, captures, why);
  return samples_for_rank(rank, capture->placement, sampled ? &*sampled : nullptr, why);
}

int world_size_of_run(const RunManifest& manifest) {
  std::size_t world = 0;
  for (const auto& stage : manifest.stages) world = std::max(world, stage.ranks.size());
  return static_cast<int>(world);
}

bool is_ranked_run(const fs::path& main_directory) {
  std::error_code error;
  return fs::is_directory(main_directory / RunLayout::ranks_directory(), error);
}

int primary_rank_of_run(const RunManifest& manifest) {
  for (const Stage profiled : {Stage::ncu, Stage::nsys}) {
    const char* stage = to_string(profiled);  // the record's name, and the role of the ranks it profiled
    for (const auto& record : manifest.stages) {
      if (record.name != stage) continue;
      std::optional<int> lowest;
      for (const auto& rank : record.ranks) {
        if (rank.role == stage && (!lowest || rank.rank < *lowest)) lowest = rank.rank;
      }
      if (lowest) return *lowest;
    }
  }
  return 0;
}

CrossRankAnalysis analyze_ranks_of_run(const fs::path& main_directory, const RunManifest& manifest,
                                       std::vector<std::string>& warnings) {
  std::vector<RankTimeline> timelines;
  std::vector<RankCapture> captures;
  const int world = world_size_of_run(manifest);
  // A rank whose capture traced no CUDA work (the sampled preset) is sampled over its ranges' CPU time; a rank that
  // did not sample cannot tell that from its export alone, so the run's nsys.trace says.
  TimelineOptions timeline_options;
  if (auto config = load_recorded_config(main_directory))
    timeline_options.cuda_traced = analysis_options_for(config.value(), std::nullopt).cuda_traced;
  for (int rank = 0; rank < world; ++rank) {
    const fs::path nsys = rank_directory(main_directory, rank) / RunLayout::nsys_directory();
    RankTimeline timeline;
    timeline.rank = rank;
    const fs::path sqlite = nsys / RunLayout::nsys_sqlite().filename();
    Result<RankTimeline> read = timeline;
    if (fs::exists(sqlite)) {
      RankCapture& capture = captures.emplace_back();
      capture.rank = rank;
      capture.timeline.emplace();
      read = rank_timeline_from_sqlite(rank, sqlite, timeline_options, &*capture.timeline);
      if (!read) capture.timeline.reset();
      read_sampling_inputs(main_directory, sqlite, capture, warnings);
    } else if (fs::exists(nsys / "summary_cuda_gpu_kern_sum.csv")) {
      read = rank_timeline_from_nsys_stats(rank, nsys);
    }
    if (!read) {
      warnings.push_back("cross-rank view: " + read.error().describe());
    } else {
      timeline = std::move(read.value());
    }
    timeline.stage1_wall_s = rank_wall_s(manifest, Stage::workload, rank);
    timeline.nsys_wall_s = rank_wall_s(manifest, Stage::nsys, rank);
    timelines.push_back(std::move(timeline));
  }
  CrossRankOptions options;
  // A capture gated on `decode` holds no `prefill` to align on; the gate range's start is the next
  // common point (used only where the ranks have no collective kernel to align on).
  options.fallback_align_range = capture_gate_of_run(main_directory, manifest).value_or("");
  CrossRankAnalysis analysis = analyze_ranks(timelines, options);
  attach_rank_sampling(captures, options.step_range, analysis);
  return analysis;
}

Result<void> write_cross_rank_files(const CrossRankAnalysis& analysis, const fs::path& main_directory) {
  const RunLayout layout(main_directory);
  std::error_code error;
  fs::create_directories(layout.resolve(RunLayout::analysis_directory()), error);
  if (auto written =
          detail::write_file_atomically(layout.resolve(RunLayout::analysis_ranks_csv()), cross_rank_csv(analysis));
      !written)
    return written;
  return detail::write_file_atomically(layout.resolve(RunLayout::analysis_ranks_markdown()),
                                       cross_rank_markdown(analysis));
}

}  // namespace llmprof
