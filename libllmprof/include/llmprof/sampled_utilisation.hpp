// Per-stage utilisation from the GPU's own sampled counters (llmprof/gpu_metrics.hpp): SM, tensor and DRAM
// activity and DRAM bytes per step for each stage the timeline knows (NVTX stages and engine step kinds alike,
// since a kind's range is a stage), beside ncu's measured bytes where both exist.
#pragma once

#include <optional>

#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

// Fills the sampled_* fields of each stage of `report` that `timeline` holds. Without samples every stage's
// sampled_note says why (no GPU_METRICS table: sampling off, not available, or an nsys that has none).
// Figures are withheld, with the note saying so, where fewer than kMinimumStageSamples samples fell in a stage,
// and bytes where the peak DRAM bandwidth or the DRAM metrics are unknown.
inline constexpr std::int64_t kMinimumStageSamples = 20;
// The median step's series (ReportStage::sampled_median_step) keeps at most this many points.
inline constexpr std::size_t kSampledSeriesPoints = 200;
void attach_sampled_utilisation(const TimelineReport& timeline, const std::optional<GpuMetricSamples>& samples,
                                AnalysisReport& report);

}  // namespace llmprof
