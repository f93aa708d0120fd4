// The cross-rank view read back from a run directory (see rank_analysis.hpp).
#include "llmprof/rank_analysis.hpp"

#include <algorithm>

#include "core/atomic_file.hpp"
#include "llmprof/deep_profiler.hpp"
#include "llmprof/run_analysis.hpp"
#include "llmprof/run_layout.hpp"

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

}  // namespace

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
  const int world = world_size_of_run(manifest);
  for (int rank = 0; rank < world; ++rank) {
    const fs::path nsys = rank_directory(main_directory, rank) / RunLayout::nsys_directory();
    RankTimeline timeline;
    timeline.rank = rank;
    const fs::path sqlite = nsys / RunLayout::nsys_sqlite().filename();
    Result<RankTimeline> read = timeline;
    if (fs::exists(sqlite)) {
      read = rank_timeline_from_sqlite(rank, sqlite);
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
  return analyze_ranks(timelines, options);
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
