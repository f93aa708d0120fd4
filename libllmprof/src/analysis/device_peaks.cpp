// Datasheet peaks of known GPUs. Dense figures: NVIDIA quotes tensor throughput "with sparsity";
// the dense value is half of it. Bandwidths are the datasheet HBM figures in bytes/s (1 TB = 1e12).
#include "llmprof/device_peaks.hpp"

#include <array>

namespace llmprof {
namespace {

struct DatasheetEntry {
  std::string_view device_name;  // as CUDA's device name / ncu's device__attribute_display_name
  std::string_view source;
  double bf16, fp16, tf32, fp8, fp64_tensor, fp32, fp64;  // TFLOP/s, dense
  double dram_terabytes_per_s;
};

// NVIDIA H100 Tensor Core GPU datasheet (2023) and H200 datasheet (2024): SXM5 / PCIe / NVL columns.
constexpr std::array<DatasheetEntry, 4> datasheet{{
    {"NVIDIA H100 80GB HBM3", "NVIDIA H100 datasheet, H100 SXM column (dense = half the sparse figure)", 989.4, 989.4,
     494.7, 1978.9, 66.9, 66.9, 33.5, 3.35},
    {"NVIDIA H100 PCIe", "NVIDIA H100 datasheet, H100 PCIe column (dense = half the sparse figure)", 756.5, 756.5,
     378.0, 1513.0, 51.2, 51.2, 25.6, 2.0},
    {"NVIDIA H100 NVL", "NVIDIA H100 datasheet, H100 NVL column per GPU (dense = half the sparse figure)", 835.5, 835.5,
     417.5, 1670.5, 60.0, 60.0, 30.0, 3.9},
    {"NVIDIA H200", "NVIDIA H200 datasheet, H200 SXM column (dense = half the sparse figure)", 989.4, 989.4, 494.7,
     1978.9, 66.9, 66.9, 33.5, 4.8},
}};

}  // namespace

std::optional<DevicePeaks> datasheet_peaks(std::string_view device_name) {
  for (const auto& entry : datasheet) {
    if (entry.device_name != device_name) continue;
    DevicePeaks peaks;
    peaks.name = std::string(device_name);
    const std::pair<std::string_view, double> values[] = {{precision::bf16, entry.bf16},
                                                          {precision::fp16, entry.fp16},
                                                          {precision::tf32, entry.tf32},
                                                          {precision::fp8, entry.fp8},
                                                          {precision::fp64_tensor, entry.fp64_tensor},
                                                          {precision::fp32, entry.fp32},
                                                          {precision::fp64, entry.fp64}};
    for (const auto& [key, tera] : values) {
      peaks.peak_flop_per_s[std::string(key)] = tera * 1e12;
      peaks.sources[std::string(key)] = std::string(entry.source);
    }
    peaks.peak_dram_bytes_per_s = entry.dram_terabytes_per_s * 1e12;
    peaks.sources["dram"] = std::string(entry.source);
    return peaks;
  }
  return std::nullopt;
}

}  // namespace llmprof
