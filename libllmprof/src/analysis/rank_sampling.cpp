// sample_rank_steps: a rank's step range from the samples of the capture that sampled its GPU
// (llmprof/rank_sampling.hpp). The figures are measure_sampled_stage's, as every stage's, over the rank's steps
// that the source's sampling window covers.
#include "llmprof/rank_sampling.hpp"

#include <algorithm>

#include "core/format.hpp"
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
  if (samples.gpu_bus.empty())
    return whose + " does not say which GPU it sampled (its export lists several GPUs, or none with a bus location, "
                   "and nsys's listing named none)";
  if (placement.kernel_gpu_buses.empty()) return "the capture does not say which GPU this rank ran on";
  if (placement.kernel_gpu_buses.size() > 1) return "this rank's kernels ran on several GPUs";
  if (placement.kernel_gpu_buses.front() != samples.gpu_bus)
    return "this rank ran on the GPU at " + placement.kernel_gpu_buses.front() + ", " + whose + " sampled the one at " +
           samples.gpu_bus;
  return std::nullopt;
}

}  // namespace

AttributedSamples samples_for_rank(int rank, const CapturePlacement& placement, const SampledCapture* source,
                                   const std::string& why_none) {
  AttributedSamples attributed;
  if (!source || !source->samples) {
    attributed.origin = why_none;
    return attributed;
  }
  if (auto mismatch = gpu_mismatch(placement, *source)) {
    attributed.origin = "withheld: " + *mismatch;
    return attributed;
  }
  if (source->rank == rank) {
    attributed.samples = *source->samples;
    attributed.origin = "from its own capture";
    if (!source->sharers.empty()) {
      attributed.origin += " (the GPU's counters count every process on it: rank";
      for (std::size_t i = 0; i < source->sharers.size(); ++i)
        attributed.origin += (i == 0 ? " " : ", ") + std::to_string(source->sharers[i]);
      attributed.origin += " ran on it too)";
    }
    return attributed;
  }
  if (!placement.clock_origin_utc_ns || !source->placement.clock_origin_utc_ns) {
    attributed.origin = "withheld: a capture lacks its clock origin (TARGET_INFO_SESSION_START_TIME), so " +
                        rank_text(source->rank) + "'s samples cannot be put on this rank's clock";
    return attributed;
  }
  const std::int64_t shift = *source->placement.clock_origin_utc_ns - *placement.clock_origin_utc_ns;
  attributed.samples = *source->samples;
  for (auto& time : attributed.samples->timestamps_ns) time += shift;
  attributed.other_capture = true;
  attributed.origin = "from " + rank_text(source->rank) +
                      "'s capture (the same GPU, whose counters count every process on it), moved by " +
                      detail::format_number(double(shift) / 1e6) + " ms onto this rank's clock";
  return attributed;
}

RankSampling sample_rank_steps(const TimelineReport& timeline, const std::string& step_range, int rank,
                               const CapturePlacement& placement, const SampledCapture* source,
                               const std::string& why_none) {
  RankSampling sampling;
  sampling.stage = step_range;
  const TimelineStage* stage = timeline.find_stage(step_range);
  if (!stage) {
    sampling.figures.note = "no '" + step_range + "' range in this rank's capture";
    return sampling;
  }
  const AttributedSamples attributed = samples_for_rank(rank, placement, source, why_none);
  if (source && source->samples) sampling.source_rank = source->rank;
  if (!attributed.samples) {
    sampling.figures.note = attributed.origin;
    return sampling;
  }
  const GpuMetricSamples& samples = *attributed.samples;
  sampling.clock_shift_ms =
      attributed.other_capture ? double(*source->placement.clock_origin_utc_ns - *placement.clock_origin_utc_ns) / 1e6
                               : 0.0;
  for (const auto& instance : stage->instances) {
    const auto window = sampled_window(instance, timeline.cuda_untraced);
    if (window && samples_cover(samples, window->first, window->second))  // the stages' rule (sampled_utilisation.hpp)
      ++sampling.steps;
    else
      ++sampling.steps_outside;
  }
  if (sampling.steps == 0) {
    sampling.figures.note = "withheld: none of this rank's " + std::to_string(stage->instances.size()) +
                            " steps lies wholly inside the sampling window (" + attributed.origin + ")";
    return sampling;
  }
  // The whole timeline, though only the step range is measured: whether the step ranges hold their GPU work is read
  // up to the next boundary of any range on their thread. No device peak: a rank's is the samples' own.
  sampling.figures = measure_sampled_stage(
      timeline, *stage, samples,
      {double(stage->instances.size()), std::nullopt, attributed.origin, attributed.other_capture});
  // The bounds of ranks.csv's rows, where the figures are made: one that cannot be true is withheld, the note says so.
  for (const std::string& warning :
       withhold_impossible_sampled_figures(sampling, rank_text(rank) + "'s " + step_range + " steps"))
    sampling.figures.note += "; " + warning;
  return sampling;
}

}  // namespace llmprof
