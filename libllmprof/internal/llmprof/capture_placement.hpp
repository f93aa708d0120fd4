// Where an nsys capture sits on its host's clock and which GPUs its kernels ran on, from its SQLite export: what
// lets one rank's capture be measured with the GPU-metrics samples another rank's capture took (per-rank sampling:
// nsys 2025.3.1 lets one session sample a GPU; a second fails with "Already under profiling").
//
// The export's timestamps count from TARGET_INFO_SESSION_START_TIME.utcEpochNs. Measured on the H200 (nsys 2025.3.1,
// two processes sharing the GPU, one sampling, tests/data/gpu-metrics/ranks/README.md): moving the other capture's
// kernels by the difference of the two origins lined them up with the sampled SM activity to within 0.25 ms of the
// best lag found by correlation; ANALYSIS_DETAILS.startTime added to it was 271 ms off.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct CapturePlacement {
  std::optional<std::int64_t> clock_origin_utc_ns;  // UTC of the export's time zero; nullopt without the table
  // PCI bus location of each GPU the capture's kernels ran on (CUPTI deviceId = TARGET_INFO_GPU.cuDevice); where the
  // capture traced no kernels, of the one GPU TARGET_INFO_GPU lists (none when it lists several).
  std::vector<std::string> kernel_gpu_buses;
};

// An Error (naming the file) only when the export cannot be opened; tables it lacks leave their fields empty.
Result<CapturePlacement> read_capture_placement(const std::filesystem::path& sqlite_file);

}  // namespace llmprof
