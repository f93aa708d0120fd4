// Per-stage utilisation from the GPU's own sampled counters (llmprof/gpu_metrics.hpp): SM, tensor and DRAM
// activity and DRAM bytes per step for each stage the timeline knows (NVTX stages and engine step kinds alike,
// since a kind's range is a stage), beside ncu's measured bytes where both exist.
#pragma once

#include <optional>
#include <utility>

#include "llmprof/analysis.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/sampled_stage.hpp"
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
// note (why there are none, or why they were withheld). One rule for every capture, its own samples or another's moved
// onto its clock (`other_capture`, per-rank sampling, llmprof/rank_sampling.hpp): an instance counts only when its
// window lies inside the samples' span (samples_cover); the stage's steps are scaled to the instances kept, and the
// note says how many were left out. A stage whose instances all lie outside is withheld, the note placing both on the
// capture's clock. The kept instances' windows are merged where they overlap, so a moment of GPU time is sampled once
// however many instances hold it.
void attach_sampled_utilisation(const TimelineReport& timeline, const std::optional<GpuMetricSamples>& samples,
                                AnalysisReport& report, const std::string& origin = "", bool other_capture = false);

// What measure_sampled_stage needs besides the samples and the stage.
struct SampledStageInputs {
  std::optional<double> steps;  // over all the stage's instances; null: bytes per step withheld
  // The GPU's peak DRAM bandwidth where the samples do not carry it (GpuMetricSamples::peak_dram_bytes_per_s).
  std::optional<double> device_peak_dram_bytes_per_s;
  std::string origin;          // as attach_sampled_utilisation's
  bool other_capture = false;  // as attach_sampled_utilisation's
};

// The figures of one of `timeline`'s stages (its instances, by the rules above) from `samples`: what
// attach_sampled_utilisation puts in each stage's sampled_* fields, and per-rank sampling in each rank's record
// (llmprof/rank_sampling.hpp). The figures are not range-checked here: each record's table checks them.
SampledStage measure_sampled_stage(const TimelineReport& timeline, const TimelineStage& stage,
                                   const GpuMetricSamples& samples, const SampledStageInputs& inputs);

// The window an instance is sampled over: its GPU-active time, or its range's CPU time where the capture traced no
// CUDA work (TimelineReport::cuda_untraced); nullopt for an instance without recorded GPU work in a traced capture.
std::optional<std::pair<std::int64_t, std::int64_t>> sampled_window(const TimelineInstance& instance,
                                                                    bool cuda_untraced);

// Whether the samples cover the window [start_ns, end_ns]: the samples span (first - period, last] (a sample reports
// the period that ends at it), and a window may reach a period past either end, less than one sample unsampled (a
// capture's last kernel may end between its last sample and the next; on the recorded H200 decode, 28 us after it).
bool samples_cover(const GpuMetricSamples& samples, std::int64_t start_ns, std::int64_t end_ns);

}  // namespace llmprof
