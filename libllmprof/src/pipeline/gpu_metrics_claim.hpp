// Which GPUs one rank's nsys samples under a launcher. nsys 2025.3.1 lets one session sample a GPU: a second
// nsys asking for it exits 1 before the workload runs ("Already under profiling", measured on the H200 on
// 2026-11-29 with two processes on one GPU), so the ranks of a host must not all pass
// --gpu-metrics-devices=all. Each profiled rank claims, under a lock per host (MAIN/ranks/gpu-metrics/), either
// its one visible GPU (CUDA_VISIBLE_DEVICES names one: it samples "cuda-visible") or the whole host (it samples
// "all"). A rank whose GPU or host is claimed already samples nothing; the analysis measures it with the
// claimer's samples (llmprof/rank_sampling.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof::detail {

struct GpuMetricsClaim {
  int rank = 0;
  std::string devices;  // "all", or the one CUDA_VISIBLE_DEVICES entry the rank sees
};

struct GpuMetricsDecision {
  std::string devices_value;             // the --gpu-metrics-devices value; "" = this rank does not sample
  std::optional<GpuMetricsClaim> claim;  // what this rank claims, when it samples
  std::string note;                      // one line for status.json: what it samples, or who does
};

// The rule alone, over the claims already made on the host.
GpuMetricsDecision decide_gpu_metrics_sampling(const std::vector<GpuMetricsClaim>& claims, int rank,
                                               const std::optional<std::string>& cuda_visible_devices,
                                               bool cuda_visible_supported);

// The rule under the host's lock (flock on DIRECTORY/<host>.lock), the claim appended to DIRECTORY/<host>.claims.
Result<GpuMetricsDecision> claim_gpu_metrics_sampling(const std::filesystem::path& directory, const std::string& host,
                                                      int rank, const std::optional<std::string>& cuda_visible_devices,
                                                      bool cuda_visible_supported);

}  // namespace llmprof::detail
