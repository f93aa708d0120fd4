// GPU-metrics samples from an nsys SQLite export: the GPU's own counters, sampled while the workload ran at
// full speed (nsys profile --gpu-metrics-devices; config nsys.gpu_metrics). nsys 2025.3.1 writes GPU_METRICS
// (timestamp, typeId, metricId, value) and TARGET_INFO_GPU_METRICS (metricId -> metricName, e.g. "SMs Active
// [Throughput %]"), with timestamps on the clock of the export's kernel rows; TARGET_INFO_GPU holds the GPU's
// name and peak DRAM bandwidth (memoryBandwidth, bytes/s). On the H100 and H200 the gh100 set samples 22
// metrics; the ones read here are percentages of their peak.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct GpuMetricSamples {
  std::int64_t period_ns = 0;  // the median spacing of the sample timestamps (50,000 ns at 20 kHz)
  std::string gpu_name;        // TARGET_INFO_GPU.name of the sampled GPU; "" when the table is absent
  std::optional<double> peak_dram_bytes_per_s;  // TARGET_INFO_GPU.memoryBandwidth; nullopt when absent or 0
  std::int64_t other_gpus = 0;  // GPUs whose samples were left out (the first GPU's are kept)
  // PCI bus location of the sampled GPU where the export can tell: it sampled one GPU and TARGET_INFO_GPU lists
  // one ("" otherwise: nsys 2025.3.1's GENERIC_EVENT_SOURCES names no GPU, so several cannot be told apart).
  std::string gpu_bus;
  // One entry per sample time, ascending; each metric's value at it in percent of its peak, NaN when that
  // metric was not sampled (a set without it).
  std::vector<std::int64_t> timestamps_ns;
  std::vector<double> sm_active;      // "SMs Active [Throughput %]"
  std::vector<double> tensor_active;  // "Tensor Active [Throughput %]" (also "Tensor Active / ...")
  std::vector<double> dram_read;      // "DRAM Read Bandwidth [Throughput %]"
  std::vector<double> dram_write;     // "DRAM Write Bandwidth [Throughput %]"
};

// The samples that measure a capture and where they came from: where per-rank sampling decided it (a run under
// --launcher, llmprof/rank_sampling.hpp), another capture's of the same GPU moved onto this one's clock
// (`other_capture`), the capture's own, or none (`samples` nullopt) with the reason in `origin`.
struct AttributedSamples {
  std::optional<GpuMetricSamples> samples;
  bool other_capture = false;
  std::string origin;  // ends each stage's sampled_note; without samples, the whole note
};

// nullopt (not an error) when the export has no GPU_METRICS table or no row in it: sampling was off, not
// available (nsys 2022.4 without a GPU writes no such table), or the capture held no sample. An Error (naming
// the file) when the tables exist but cannot be read: a missing column, a value out of 0..100 for a percentage,
// fewer than two distinct sample times.
Result<std::optional<GpuMetricSamples>> read_gpu_metric_samples(const std::filesystem::path& sqlite_file);

}  // namespace llmprof
