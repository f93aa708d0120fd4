// Each rank's step range measured from the GPU's own sampled counters. Only one nsys session may sample a GPU
// (nsys 2025.3.1 fails a second with "Already under profiling"), so under a launcher one rank per GPU samples
// (deep-profile rank-exec decides, MAIN/ranks/gpu-metrics/): a rank that did not sample is measured with the
// samples of the capture that sampled its GPU, moved onto its own clock (llmprof/capture_placement.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/capture_placement.hpp"
#include "llmprof/gpu_metrics.hpp"
#include "llmprof/ranks_record.hpp"
#include "llmprof/timeline_record.hpp"

namespace llmprof {

// The capture whose samples measure a rank: the rank's own, or the sampler's on its host.
struct SampledCapture {
  int rank = 0;
  const GpuMetricSamples* samples = nullptr;
  CapturePlacement placement;
  std::vector<int> sharers;  // other ranks whose kernels ran on the sampled GPU: its counters count their work too
};

// The samples that measure the rank whose capture is at `placement`: the source's own when it is this rank, moved
// onto its clock when it is another's; none, with the reason in `origin`, under the conditions below.
AttributedSamples samples_for_rank(int rank, const CapturePlacement& placement, const SampledCapture* source,
                                   const std::string& why_none);

// `placement` is the rank's own capture's; `source` nullptr when no capture sampled the rank's GPU (the note says
// `why_none`). Figures are withheld, with the note saying why, where the source sampled several GPUs without
// saying which is the rank's, where the rank's GPU is not the one sampled, where either capture lacks its clock
// origin, and where fewer than kMinimumStageSamples samples fell in the rank's steps.
RankSampling sample_rank_steps(const TimelineReport& timeline, const std::string& step_range, int rank,
                               const CapturePlacement& placement, const SampledCapture* source,
                               const std::string& why_none);

}  // namespace llmprof
