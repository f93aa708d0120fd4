// sample_rank_steps: a rank's step range from the samples of the capture that sampled its GPU
// (llmprof/rank_sampling.hpp). The per-stage arithmetic is attach_sampled_utilisation's, over the rank's steps
// that the source's sampling window covers.
#include "llmprof/rank_sampling.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "llmprof/analysis.hpp"
#include "llmprof/sampled_utilisation.hpp"

namespace llmprof {
namespace {

std::string rank_text(int rank) { return "rank " + std::to_string(rank); }

// Why the source's samples cannot be this rank's GPU's, or nullopt when they are.
std::optional<std::string> gpu_mismatch(const CapturePlacement& placement, const SampledCapture& source) {
  const GpuMetricSamples& samples = *source.samples;
  const std::string whose = rank_text(source.rank) + "'s capture";
  if (samples.other_gpus > 0)
    return whose + " sampled " + std::to_string(samples.other_gpus + 1) +
           " GPUs and its export does not say which is which (nsys 2025.3.1); give each rank one GPU "
           "(CUDA_VISIBLE_DEVICES) so that each rank's nsys samples its own";
  if (samples.gpu_bus.empty()) return whose + " does not name the GPU it sampled (no TARGET_INFO_GPU bus location)";
  if (placement.kernel_gpu_buses.empty()) return "the capture does not say which GPU this rank ran on";
  if (placement.kernel_gpu_buses.size() > 1) return "this rank's kernels ran on several GPUs";
  if (placement.kernel_gpu_buses.front() != samples.gpu_bus)
    return "this rank ran on the GPU at " + placement.kernel_gpu_buses.front() + ", " + whose + " sampled the one at " +
           samples.gpu_bus;
  return std::nullopt;
}

// The step instances whose sampling window lies inside the samples' span; the others are counted.
TimelineStage covered_steps(const TimelineStage& stage, const GpuMetricSamples& samples, bool cpu_windows,
                            std::int64_t& outside) {
  TimelineStage covered = stage;
  covered.instances.clear();
  const std::int64_t first = samples.timestamps_ns.front() - samples.period_ns;
  const std::int64_t last = samples.timestamps_ns.back();
  for (const auto& instance : stage.instances) {
    const std::int64_t start = cpu_windows ? instance.cpu_start_ns : instance.gpu_start_ns.value_or(instance.cpu_start_ns);
    const std::int64_t end = cpu_windows ? instance.cpu_end_ns : instance.gpu_end_ns.value_or(instance.cpu_end_ns);
    if (start >= first && end <= last)
      covered.instances.push_back(instance);
    else
      ++outside;
  }
  return covered;
}

}  // namespace

RankSampling sample_rank_steps(const TimelineReport& timeline, const std::string& step_range, int rank,
                               const CapturePlacement& placement, const SampledCapture* source,
                               const std::string& why_none) {
  RankSampling sampling;
  sampling.stage = step_range;
  const TimelineStage* stage = timeline.find_stage(step_range);
  if (!stage) {
    sampling.note = "no '" + step_range + "' range in this rank's capture";
    return sampling;
  }
  if (!source || !source->samples) {
    sampling.note = why_none;
    return sampling;
  }
  sampling.source_rank = source->rank;
  if (auto mismatch = gpu_mismatch(placement, *source)) {
    sampling.note = "withheld: " + *mismatch;
    return sampling;
  }
  GpuMetricSamples samples = *source->samples;
  std::string origin = "its own capture";
  if (source->rank != rank) {
    if (!placement.clock_origin_utc_ns || !source->placement.clock_origin_utc_ns) {
      sampling.note = "withheld: a capture lacks its clock origin (TARGET_INFO_SESSION_START_TIME), so " +
                      rank_text(source->rank) + "'s samples cannot be put on this rank's clock";
      return sampling;
    }
    const std::int64_t shift = *source->placement.clock_origin_utc_ns - *placement.clock_origin_utc_ns;
    for (auto& time : samples.timestamps_ns) time += shift;
    sampling.clock_shift_ms = double(shift) / 1e6;
    origin = rank_text(source->rank) + "'s capture (the same GPU, whose counters count every process on it), moved by " +
             detail::format_number(double(shift) / 1e6) + " ms onto this rank's clock";
  } else {
    sampling.clock_shift_ms = 0.0;
  }
  TimelineReport covered;
  covered.cuda_untraced = timeline.cuda_untraced;
  covered.stages.push_back(covered_steps(*stage, samples, timeline.cuda_untraced, sampling.steps_outside));
  sampling.steps = std::int64_t(covered.stages.front().instances.size());
  if (sampling.steps == 0) {
    sampling.note = "withheld: none of this rank's " + std::to_string(stage->instances.size()) + " steps ran while " +
                    (source->rank == rank ? std::string("its capture") : rank_text(source->rank) + "'s capture") +
                    " sampled (" + origin + ")";
    return sampling;
  }
  AnalysisReport report;
  ReportStage measured;
  measured.name = stage->name;
  measured.domain = stage->domain;
  measured.steps = double(sampling.steps);
  report.stages.push_back(measured);
  attach_sampled_utilisation(covered, samples, report);
  const ReportStage& figures = report.stages.front();
  sampling.samples = figures.sampled_samples.value_or(0);
  sampling.sm_active = figures.sampled_sm_active;
  sampling.tensor_active = figures.sampled_tensor_active;
  sampling.mbu = figures.sampled_mbu;
  sampling.dram_bytes_per_step = figures.sampled_dram_bytes_per_step;
  sampling.note = figures.sampled_note + "; from " + origin;
  if (sampling.steps_outside > 0)
    sampling.note += "; left out " + std::to_string(sampling.steps_outside) + " of " +
                     std::to_string(stage->instances.size()) + " steps, outside the sampling window";
  return sampling;
}

}  // namespace llmprof
