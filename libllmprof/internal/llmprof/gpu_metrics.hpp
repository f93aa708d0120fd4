// GPU-metrics samples from an nsys SQLite export: the GPU's own counters, sampled while the workload ran at
// full speed (nsys profile --gpu-metrics-devices; config nsys.gpu_metrics). nsys 2025.3.1 writes GPU_METRICS
// (timestamp, typeId, metricId, value) and TARGET_INFO_GPU_METRICS (metricId -> metricName, e.g. "SMs Active
// [Throughput %]"), with timestamps on the clock of the export's kernel rows; TARGET_INFO_GPU holds the GPU's
// name and peak DRAM bandwidth (memoryBandwidth, bytes/s). On the H100 and H200 the gh100 set samples 22
// metrics; the four read here are percentages of their peak (names ending "[Throughput %]").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

// Why the reader left values out (each sample time keeps its other metrics' values): one bad value must not cost the
// rest. Counted over the four metrics read, for the GPU kept.
struct GpuMetricValuesLeftOut {
  std::int64_t read = 0;          // rows of the four metrics read
  std::int64_t out_of_range = 0;  // a percentage outside 0..100 (-1, 101, ...)
  std::int64_t not_numbers = 0;   // text, a blob or NULL in the value column, or a timestamp that is no integer
  std::int64_t repeated = 0;      // a second value of one metric at one time (the first stands)
  std::int64_t total() const { return out_of_range + not_numbers + repeated; }
};

struct GpuMetricSamples {
  std::int64_t period_ns = 0;  // the median spacing of the sample timestamps (50,016 ns at 20 kHz on the H200)
  std::string gpu_name;        // TARGET_INFO_GPU.name of the sampled GPU; "" when the table is absent
  std::optional<double> peak_dram_bytes_per_s;  // TARGET_INFO_GPU.memoryBandwidth; nullopt when absent or 0
  std::int64_t other_gpus = 0;  // GPUs whose samples were left out (the reader withholds a capture of several)
  // PCI bus location of the sampled GPU where the export can tell: it sampled one GPU and TARGET_INFO_GPU lists
  // one ("" otherwise: nsys 2025.3.1's GENERIC_EVENT_SOURCES names no GPU, so several cannot be told apart).
  std::string gpu_bus;
  GpuMetricValuesLeftOut left_out;
  // One entry per sample time with at least one value, ascending; each metric's value at it in percent of its peak,
  // NaN when that metric was not sampled (a set without it) or its value was left out.
  std::vector<std::int64_t> timestamps_ns;
  std::vector<double> sm_active;      // "SMs Active [Throughput %]"
  std::vector<double> tensor_active;  // "Tensor Active [Throughput %]" (also "Tensor Active / ... [Throughput %]")
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

// Above this share of one metric's values left out, the metric is not what the reader takes it for (another unit,
// another meaning): the samples are withheld rather than read from what remains.
inline constexpr double kMostGpuMetricValuesLeftOut = 0.10;
// One GPU's samples come at a steady period: on every recorded export (H100, H200, nsys 2025.3.1, 20 kHz) every
// gap between sample times lay within 0.1% of the median. Fewer than this share within a quarter of the median is
// not one GPU's sampling (several GPUs' samples under one typeId, or a damaged file): withheld.
inline constexpr double kLeastRegularSampleGaps = 0.90;

// What the reader is told about the capture (all optional).
struct GpuMetricsExpectation {
  // The frequency nsys was asked to sample at (nsys.gpu_metrics): samples that come a third more often or faster are
  // several GPUs' under one typeId, even evenly interleaved, and are withheld.
  std::optional<int> requested_hz;
};

// nullopt (not an error) when the export has no GPU_METRICS table or no row in it: sampling was off, not
// available (nsys 2022.4 without a GPU writes no such table), or the capture held no sample. Bad values are left out
// and counted (GpuMetricSamples::left_out). An Error (naming the file, saying what is wrong and what to do) when the
// samples exist but are withheld: a missing column or metric-name table; names none of which the reader knows
// (another nsys version or GPU); a metric with more than kMostGpuMetricValuesLeftOut of its values left out; several
// GPUs sampled (the export does not say which samples are whose); sample times too irregular or too frequent for one
// GPU; fewer than two sample times.
Result<std::optional<GpuMetricSamples>> read_gpu_metric_samples(const std::filesystem::path& sqlite_file,
                                                                const GpuMetricsExpectation& expectation = {});

}  // namespace llmprof
