// The cross-rank view of a run under a launcher: per rank the wall and GPU figures, the collective
// (NCCL) kernel share and how much of it overlaps computation, and across ranks the imbalance, the
// straggler and the skew of step starts.
//
// Clocks of different hosts differ, so step starts are never compared as raw timestamps: each rank's
// times are first made relative to a common event, the end of the first instance of an NVTX range
// every rank emits (default "prefill"), and the skew left after that alignment is what is reported.
// The straggler is the rank whose steps start latest after alignment (HTA's definition), measured as
// its mean lag behind the earliest rank's start of the same step (so an injected per-step delay d on
// one rank reads as d).
//
// Per-rank inputs (RankTimeline) are filled from the `nsys stats` tables today
// (rank_timeline_from_nsys_stats); any other source of the same figures (a SQLite timeline) can fill
// the same struct.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/nsys_trace.hpp"
#include "llmprof/result.hpp"

namespace llmprof {

struct RankTimeline {
  int rank = 0;
  std::optional<double> stage1_wall_s;  // the rank's bare run, as rank-exec measured it
  std::optional<double> nsys_wall_s;    // the rank's run under nsys
  // Kernel time on the rank's GPU (cuda_gpu_kern_sum); nullopt when the rank has no kernel table.
  std::optional<std::int64_t> kernel_time_ns;
  std::optional<std::int64_t> collective_kernel_time_ns;
  std::optional<std::vector<NvtxRangeInstance>> ranges;   // nvtx_pushpop_trace
  std::optional<std::vector<GpuKernelInterval>> kernels;  // cuda_gpu_trace
};

struct CrossRankOptions {
  std::string align_range = "prefill";     // its first instance's end is each rank's time zero
  std::string step_range = "decode_step";  // one instance per step
};

struct RankFigures {
  int rank = 0;
  std::optional<double> stage1_wall_s, nsys_wall_s;
  std::optional<double> kernel_time_s, collective_kernel_time_s;
  std::optional<double> collective_share;  // collective kernel time / kernel time
  // Fraction of the collective kernels' time during which a computation kernel ran too.
  std::optional<double> comm_compute_overlap;
  std::size_t steps = 0;                         // step ranges seen
  std::optional<double> mean_step_start_lag_ms;  // behind the earliest rank's start of each step, after alignment
};

// max / median of a figure over ranks (1.0 = perfectly balanced).
struct Imbalance {
  std::string figure;  // stage1_wall_s, nsys_wall_s, kernel_time_s
  double max = 0, median = 0, ratio = 0;
  int max_rank = 0;
};

struct CrossRankAnalysis {
  std::vector<RankFigures> ranks;
  std::vector<Imbalance> imbalance;
  std::optional<int> straggler;
  std::optional<double> straggler_lag_ms;
  std::optional<double> skew_median_ms, skew_max_ms;  // per step: latest aligned start - earliest
  std::size_t compared_steps = 0;
  std::string alignment;                  // e.g. "end of the first 'prefill' range"
  std::vector<std::string> not_computed;  // each figure left out, and why
};

CrossRankAnalysis analyze_ranks(const std::vector<RankTimeline>& ranks, const CrossRankOptions& options = {});

// Reads one rank's figures from its nsys directory (summary_<report>.csv as `nsys stats -o summary`
// writes them): cuda_gpu_kern_sum, nvtx_pushpop_trace, cuda_gpu_trace. A missing table leaves its
// figures unset; a table that does not parse is an Error naming it.
Result<RankTimeline> rank_timeline_from_nsys_stats(int rank, const std::filesystem::path& nsys_directory);

// analysis/ranks.csv: one row per rank (rank, the RankFigures columns, empty where unknown).
std::string cross_rank_csv(const CrossRankAnalysis& analysis);
// The report's "Across ranks" section, Markdown.
std::string cross_rank_markdown(const CrossRankAnalysis& analysis);

}  // namespace llmprof
