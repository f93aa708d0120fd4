// nsys.gpu_metrics as a typed value: parsed from the config file's text once, written back in the same spelling.
#include <string>

#include "llmprof/config.hpp"

namespace llmprof {

Result<GpuMetricsSetting> parse_gpu_metrics_setting(std::string_view text) {
  if (text == "off") return GpuMetricsSetting::off();
  if (text == "auto") return GpuMetricsSetting::automatic();
  // Six digits at most: the largest frequency nsys takes has six, and std::stoi cannot overflow on them.
  if (!text.empty() && text.size() <= 6 && text.find_first_not_of("0123456789") == std::string_view::npos) {
    const int hz = std::stoi(std::string(text));
    if (hz >= kGpuMetricsMinHz && hz <= kGpuMetricsMaxHz) return GpuMetricsSetting::at_hz(hz);
  }
  return make_error(ErrorCode::invalid_argument,
                    "nsys.gpu_metrics is '" + std::string(text) +
                        "': it takes auto, off, or a sampling frequency in Hz from " +
                        std::to_string(kGpuMetricsMinHz) + " to " + std::to_string(kGpuMetricsMaxHz),
                    "write nsys.gpu_metrics=auto, off, or e.g. 20000", "nsys.gpu_metrics");
}

std::string format_gpu_metrics_setting(const GpuMetricsSetting& setting) {
  switch (setting.mode) {
    case GpuMetricsMode::off:
      return "off";
    case GpuMetricsMode::automatic:
      return "auto";
    case GpuMetricsMode::frequency:
      return std::to_string(setting.frequency_hz);
  }
  return "auto";  // not reached: every mode is handled above
}

}  // namespace llmprof
