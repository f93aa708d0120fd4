// nsys_profile_options / ncu_profile_options: the config sections as the command builders' options, in one place.
#include "llmprof/config.hpp"

namespace llmprof {

NsysProfileOptions nsys_profile_options(const NsysConfig& config) {
  // The config section as the command builder's options, field by field: the builder is usable without a config
  // (copies between two types look alike to the duplicates tool by shape only).
  NsysProfileOptions options;
  options.trace = config.trace;
  options.sample = config.sample;
  options.cpuctxsw = config.cpuctxsw;
  options.wait = config.wait;
  options.capture_range = config.capture_range;
  if (options.capture_range == NsysCaptureRange::nvtx) options.nvtx_capture = config.nvtx_capture;
  if (options.capture_range != NsysCaptureRange::none) {
    options.capture_range_end = config.capture_range_end;
    if (config.capture_range_end == NsysCaptureRangeEnd::repeat) options.capture_range_end_count = config.capture_windows;
  }
  options.nvtx_domain_include = config.nvtx_domain_include;
  options.nvtx_domain_exclude = config.nvtx_domain_exclude;
  options.env_vars = config.env_vars;
  options.stats = config.profile_stats;
  options.extra_args = config.extra_args;
  // The frequency and the set the key asks for; the pipeline adds the devices option and devices the probe found,
  // without which argv() asks for no sampling (and the probed chip's set when nsys.gpu_metrics_set is empty).
  options.gpu_metrics_frequency_hz = gpu_metrics_frequency_hz(config).value_or(0);
  options.gpu_metrics_set = config.gpu_metrics_set;
  return options;
}

std::optional<int> gpu_metrics_frequency_hz(const NsysConfig& config) {
  switch (config.gpu_metrics.mode) {
    case GpuMetricsMode::off:
      return std::nullopt;
    case GpuMetricsMode::automatic:
      return kGpuMetricsDefaultHz;
    case GpuMetricsMode::frequency: {
      const int hz = config.gpu_metrics.frequency_hz;
      if (hz < kGpuMetricsMinHz || hz > kGpuMetricsMaxHz) return std::nullopt;
      return hz;
    }
  }
  return std::nullopt;  // not reached: every mode is handled above
}

NcuProfileOptions ncu_profile_options(const NcuConfig& config) {
  NcuProfileOptions options;
  options.target_all_processes = config.target_all_processes;
  options.nvtx_include = config.nvtx_include;
  options.nvtx_exclude = config.nvtx_exclude;
  if (config.set == kLlmprofNcuSet) {
    // The folder is the configuration's (ncu-sections beside deep-profile.toml): the pipeline finds it.
    options.own_sections = {std::string(kLlmprofSectionIdentifier)};
  } else {
    options.set = config.set;
  }
  options.sections = config.sections;
  options.metrics = config.metrics;
  if (config.launch_skip > 0) options.launch_skip = config.launch_skip;
  if (config.max_launches > 0) options.launch_count = config.max_launches;
  options.replay_mode = config.replay_mode;
  options.clock_control = config.clock_control;
  options.cache_control = config.cache_control;
  options.extra_args = config.extra_args;
  return options;
}

}  // namespace llmprof
