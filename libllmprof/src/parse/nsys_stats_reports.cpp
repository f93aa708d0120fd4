// The `nsys stats` reports libllmprof reads: their names in nsys 2025.3 and 2022.4, which of them a
// probed nsys lists, and the file each one is written to under an output prefix.
#include <algorithm>
#include <system_error>

#include "llmprof/nsys_stats.hpp"

namespace llmprof {

const std::vector<NsysStatsReportSpelling>& nsys_stats_report_spellings() {
  static const std::vector<NsysStatsReportSpelling> spellings = {
      {"cuda_gpu_kern_sum", "gpukernsum", "CUDA GPU kernel summary"},
      {"nvtx_sum", "nvtxsum", "NVTX range summary"},
      {"nvtx_kern_sum", "nvtxkernsum", "NVTX range kernel summary"},
      {"nvtx_gpu_proj_sum", "nvtxgpuproj", "NVTX GPU projection"},
      {"cuda_api_sum", "cudaapisum", "CUDA API summary"},
      {"cuda_gpu_mem_time_sum", "gpumemtimesum", "GPU memory operations by time"},
  };
  return spellings;
}

const std::vector<std::string>& nsys_stats_report_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> current;
    for (const auto& spelling : nsys_stats_report_spellings()) current.push_back(spelling.current);
    return current;
  }();
  return names;
}

NsysStatsReportChoice choose_nsys_stats_reports(const std::vector<std::string>& available) {
  const auto listed = [&](const std::string& name) {
    return std::find(available.begin(), available.end(), name) != available.end();
  };
  NsysStatsReportChoice choice;
  for (const auto& spelling : nsys_stats_report_spellings()) {
    if (listed(spelling.current)) {
      choice.names.push_back(spelling.current);
    } else if (listed(spelling.legacy)) {
      choice.names.push_back(spelling.legacy);
      choice.legacy = true;
    } else {
      choice.missing.push_back(spelling.current);
    }
  }
  return choice;
}

std::filesystem::path nsys_stats_report_path(const std::filesystem::path& output_prefix, std::string_view report) {
  auto path = output_prefix;
  path += "_";
  path += std::string(report);
  path += ".csv";
  return path;
}

std::optional<std::filesystem::path> find_nsys_stats_report(const std::filesystem::path& output_prefix,
                                                            std::string_view current_name) {
  for (const auto& spelling : nsys_stats_report_spellings()) {
    if (spelling.current != current_name) continue;
    for (const auto& name : {spelling.current, spelling.legacy}) {
      const auto path = nsys_stats_report_path(output_prefix, name);
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) return path;
    }
  }
  return std::nullopt;
}

}  // namespace llmprof
