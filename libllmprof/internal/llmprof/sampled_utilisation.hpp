// Per-stage utilisation from the GPU's own sampled counters (llmprof/gpu_metrics.hpp): SM, tensor and DRAM
// activity and DRAM bytes per step for each stage the timeline knows (NVTX stages and engine step kinds alike,
// since a kind's range is a stage), beside ncu's measured bytes where both exist.
#pragma once

#include <optional>
#include <utility>

#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

// Fills the sampled_* fields of each stage of `report` that `timeline` holds. Without samples every stage's
// sampled_note says why (no GPU_METRICS table: sampling off, not available, or an nsys that has none).
// Figures are withheld, with the note saying so, where fewer than kMinimumStageSamples samples fell in a stage,
// and bytes where the peak DRAM bandwidth or the DRAM metrics are unknown.
inline constexpr std::int64_t kMinimumStageSamples = 20;
// Where the capture traced no CUDA work, a stage is sampled over its ranges' CPU time, which holds its GPU work only
// where the ranges wait for it. Its figures are withheld, the note saying why, where more than this share of the GPU
// activity sampled in and after its instances (SM active, summed) came after them: before the next start or end of
// a range on the instance's thread, with at least kMinimumStageSamples samples there (sampled_utilisation.cpp says
// what the recorded captures show on either side).
inline constexpr double kMostActivityAfterRanges = 0.10;
// The median step's series (ReportStage::sampled_median_step) keeps at most this many points.
inline constexpr std::size_t kSampledSeriesPoints = 200;
//
// `origin`, when not empty, ends every stage's note (where the samples came from); with no samples it is the whole
// note (why there are none). `other_capture`: the samples were taken by another capture of the same GPU and moved onto
// this one's clock (per-rank sampling, llmprof/rank_sampling.hpp), so they cover only that capture's window: an
// instance counts only when its window lies wholly inside the samples' span (the first sample's period to the last
// sample), the stage's steps are scaled to the instances kept, and the note says how many were left out. A capture's
// own samples span the whole capture, and every instance counts.
void attach_sampled_utilisation(const TimelineReport& timeline, const std::optional<GpuMetricSamples>& samples,
                                AnalysisReport& report, const std::string& origin = "", bool other_capture = false);

// The window an instance is sampled over: its GPU-active time, or its range's CPU time where the capture traced no
// CUDA work (TimelineReport::cuda_untraced); nullopt for an instance without recorded GPU work in a traced capture.
std::optional<std::pair<std::int64_t, std::int64_t>> sampled_window(const TimelineInstance& instance,
                                                                    bool cuda_untraced);

// Whether the window [start_ns, end_ns] lies wholly inside the samples' span (the rule above).
bool samples_cover(const GpuMetricSamples& samples, std::int64_t start_ns, std::int64_t end_ns);

}  // namespace llmprof
