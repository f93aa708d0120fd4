// The cross-rank view of a run under a launcher: per rank the wall and GPU figures, the collective
// (NCCL) kernel share and how much of it overlaps computation, and across ranks the imbalance, the
// straggler and the skew of step starts.
//
// Clocks of different hosts (and the reports of different nsys sessions) differ, so step starts are
// never compared as raw timestamps: each rank's times are first made relative to a common event, and
// the skew left after that alignment is what is reported. The event is the end of the first
// collective (NCCL) kernel when every rank has one (it ends at the same moment everywhere); otherwise
// the end of the first instance of an NVTX range every rank emits (default "prefill"; under a capture
// gated on `decode`, the start of the first `decode`). One rank's CPU and GPU times share its clock.
// The straggler is the rank whose steps start latest after alignment (HTA's definition), measured as
// its mean lag behind the earliest rank's start of the same step (so an injected per-step delay d on
// one rank reads as d).
//
// A step starts, on the GPU, when the first GPU work launched inside its range starts; on the CPU, when
// its range opens. The GPU start is used whenever every rank has it: a decode loop that does not wait
// for its GPU launches ahead, so its CPU ranges time the host's launch pace, not the step (measured on
// a CPU-only rank the two are the same thing).
//
// Per-rank inputs (RankTimeline) come from the rank's SQLite export through the timeline engine
// (rank_timeline_from_sqlite, any nsys version) or, without one, from the `nsys stats` tables of
// nsys 2023.1 and later (rank_timeline_from_nsys_stats, CPU starts only).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/nsys_trace.hpp"
#include "llmprof/rank_sampling.hpp"
#include "llmprof/ranks_record.hpp"
#include "llmprof/timeline.hpp"
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
  // The GPU side of each range that launched GPU work: the first start and last end of that work
  // (the timeline engine's projection); unset when the source cannot tell (the stats tables).
  std::optional<std::vector<NvtxRangeInstance>> gpu_ranges;
  // Range instances that are not steps and were left out of `ranges` (analysis/step_rule.hpp, the rule step kinds
  // and discovery use): nested inside another of the same name on the same thread; left open at exit.
  std::int64_t nested_set_aside = 0;
  std::int64_t unclosed_ranges = 0;
};

struct CrossRankOptions {
  std::string align_range = "prefill";     // its first instance's end is each rank's time zero
  std::string step_range = "decode_step";  // one instance per step
  // When some rank has no `align_range` (a capture gated on a later range never sees it), the start of
  // this range's first instance instead: the gate range, which every rank opens after the same point.
  std::string fallback_align_range;
};

// max / median of a figure over ranks (1.0 = perfectly balanced).
struct Imbalance {
  std::string figure;  // stage1_wall_s, nsys_wall_s, kernel_time_s
  double max = 0, median = 0, ratio = 0;
  int max_rank = 0;
};

// A rank is named the straggler only when its mean lag is at least this share of the median step
// period: measured on two H200s (1b TP decode) the latest rank lagged 0.13 ms of a 17 ms
// step (0.8%) with no delay injected, and 5.17 ms of a 31.8 ms step (16%) with 5 ms injected.
inline constexpr double kStragglerStepShare = 0.05;

struct CrossRankAnalysis {
  std::vector<RankFigures> ranks;
  std::vector<Imbalance> imbalance;
  // The rank whose steps start latest on average, and by how much; set whenever steps were compared.
  std::optional<int> latest_rank;
  std::optional<double> latest_lag_ms;
  std::optional<double> step_period_ms;  // median interval between the earliest rank's step starts
  // The same rank, set only when its lag is at least kStragglerStepShare of the step period.
  std::optional<int> straggler;
  std::optional<double> straggler_lag_ms;
  std::optional<double> skew_median_ms, skew_max_ms;  // per step: latest aligned start - earliest
  std::size_t compared_steps = 0;
  std::string alignment;                  // e.g. "end of the first 'prefill' range"
  std::string step_basis;                 // which start of a step was compared: "GPU" or "CPU" (see above)
  std::vector<std::string> not_computed;  // each figure left out, and why
  std::string step_rule;                  // what the step rule set aside over all ranks, one line; "" for nothing
};

CrossRankAnalysis analyze_ranks(const std::vector<RankTimeline>& ranks, const CrossRankOptions& options = {});

// Reads one rank's figures from its nsys directory (summary_<report>.csv as `nsys stats -o summary`
// writes them): cuda_gpu_kern_sum, nvtx_pushpop_trace, cuda_gpu_trace. A missing table leaves its
// figures unset; a table that does not parse is an Error naming it.
Result<RankTimeline> rank_timeline_from_nsys_stats(int rank, const std::filesystem::path& nsys_directory);

// Reads one rank's figures from its `nsys export --type sqlite` file through the timeline engine:
// ranges with their GPU projection, and every kernel. Errors name the file (as analyze_timeline's).
// `options` as the timeline engine takes them (whether the capture traced CUDA: the run's nsys.trace); `engine_report`,
// when given, receives the engine's report too (per-rank sampling measures from it).
Result<RankTimeline> rank_timeline_from_sqlite(int rank, const std::filesystem::path& sqlite_export,
                                               const TimelineOptions& options = {},
                                               TimelineReport* engine_report = nullptr);

// analysis/ranks.csv (llmprof/ranks_record.hpp's write_ranks_csv of the ranks and the step basis).
std::string cross_rank_csv(const CrossRankAnalysis& analysis);
// The report's "Across ranks" section, Markdown.
std::string cross_rank_markdown(const CrossRankAnalysis& analysis);

}  // namespace llmprof
