// Peak compute and DRAM bandwidth of a GPU, and where each number came from.
//
// The analysis prefers peaks measured by ncu in the same report (they hold at the clocks ncu
// profiled at); when there is no ncu data it falls back to the datasheet table below, keyed by the
// device name CUDA reports. Every number carries its source so a reader can tell which it is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace llmprof {

// Precision keys used throughout the analysis. Tensor-core precisions are dense (no sparsity).
namespace precision {
inline constexpr std::string_view bf16 = "bf16";  // tensor cores, bf16 inputs
inline constexpr std::string_view fp16 = "fp16";  // tensor cores, fp16 inputs
inline constexpr std::string_view tf32 = "tf32";  // tensor cores, tf32 inputs
inline constexpr std::string_view fp8 = "fp8";    // tensor cores, fp8 inputs
inline constexpr std::string_view fp64_tensor = "fp64_tensor";
inline constexpr std::string_view fp32 = "fp32";                      // CUDA cores (FFMA/FADD/FMUL)
inline constexpr std::string_view fp64 = "fp64";                      // CUDA cores (DFMA/DADD/DMUL)
inline constexpr std::string_view fp16_cuda_core = "fp16_cuda_core";  // CUDA cores (HFMA2/HADD2/HMUL2)
}  // namespace precision

struct DevicePeaks {
  std::string name;                               // "NVIDIA H100 80GB HBM3"
  std::map<std::string, double> peak_flop_per_s;  // precision key -> FLOP/s (dense)
  std::optional<double> peak_dram_bytes_per_s;
  std::map<std::string, std::string> sources;  // precision key or "dram" -> where it came from
};

// Datasheet peaks for GPUs libllmprof knows (H100 SXM5 80GB, H100 PCIe, H100 NVL, H200), matched
// on the CUDA device name; nullopt for any other device (never guessed from a similar name).
std::optional<DevicePeaks> datasheet_peaks(std::string_view device_name);

}  // namespace llmprof
