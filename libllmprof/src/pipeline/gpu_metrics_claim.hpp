// Which GPU one rank's nsys samples under a launcher. nsys 2025.3.1 lets one session sample a GPU: a second
// nsys asking for it exits 1 before the workload runs ("Already under profiling", measured on the H200
// with two processes on one GPU), so the ranks of a host must not all pass
// --gpu-metrics-devices=all. Each profiled rank claims one GPU, under a lock per host (MAIN/ranks/gpu-metrics/):
// the one its CUDA_VISIBLE_DEVICES names ("cuda-visible"), else the GPU nsys lists under its local rank's number
// (the GPU torchrun's and most launchers' ranks use; the analysis checks that the rank's kernels ran on that GPU's
// bus before it uses the samples). A rank whose GPU is claimed already, or whose local rank names no listed GPU
// (more ranks than GPUs), samples nothing; the analysis measures it with the samples of the capture that sampled
// its GPU (llmprof/rank_sampling.hpp). The claim is by name, so one GPU named two ways (an index and a UUID in
// CUDA_VISIBLE_DEVICES, or hosts that report different names for one machine) can still be claimed twice: the
// second nsys then fails before its workload runs, and the rank's stage says so.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof::detail {

struct GpuMetricsClaim {
  int rank = 0;
  std::string gpu;  // "visible:<CUDA_VISIBLE_DEVICES entry>" or "listed:<nsys's GPU id>"
};

// What a rank knows when it decides.
struct GpuMetricsRequest {
  int rank = 0;
  int local_rank = 0;
  std::optional<std::string> cuda_visible_devices;
  bool cuda_visible_supported = false;        // this nsys takes --gpu-metrics-devices=cuda-visible
  std::map<std::string, std::string> listed;  // nsys's GPU ids -> PCI bus (GpuMetricsSupport::buses)
};

struct GpuMetricsDecision {
  std::string devices_value;             // the --gpu-metrics-devices value; "" = this rank does not sample
  std::string bus;                       // the sampled GPU's PCI bus, where the listing names it
  std::optional<GpuMetricsClaim> claim;  // what this rank claims, when it samples
  std::string note;                      // one line for status.json: what it samples, or why not
};

// The rule alone, over the claims already made on the host.
GpuMetricsDecision decide_gpu_metrics_sampling(const std::vector<GpuMetricsClaim>& claims,
                                               const GpuMetricsRequest& request);

// The rule under the host's lock (flock on DIRECTORY/<host>.lock), the claim appended to DIRECTORY/<host>.claims.
Result<GpuMetricsDecision> claim_gpu_metrics_sampling(const std::filesystem::path& directory, const std::string& host,
                                                      const GpuMetricsRequest& request);

}  // namespace llmprof::detail
