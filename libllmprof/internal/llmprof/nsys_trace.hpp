// Typed rows of the two `nsys stats` trace reports the cross-rank view reads: every NVTX push/pop
// range instance (nvtx_pushpop_trace) and every GPU kernel (cuda_gpu_trace), with their times on the
// rank's own clock. Columns are found by header name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct NvtxRangeInstance {
  std::string name;  // as nsys prints it (a ':' prefix marks the default domain in some versions)
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t thread = 0;  // "TID" (a globalTid from the SQLite export); 0 when the report has no such column
};

struct GpuKernelInterval {
  std::string name;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t stream = -1;  // "Strm"; -1 when the report has no such column
};

// nvtx_pushpop_trace: "Start (ns)", "End (ns)", "Name" (+ "TID").
Result<std::vector<NvtxRangeInstance>> parse_nsys_nvtx_trace(const std::filesystem::path& csv_file);
Result<std::vector<NvtxRangeInstance>> parse_nsys_nvtx_trace(std::istream& in, const std::string& source_name);
// cuda_gpu_trace: "Start (ns)", "Duration (ns)", "Name" (+ "Strm"); memory operations ("[CUDA memcpy
// ...]", "[CUDA memset]") are left out: only kernels are returned.
Result<std::vector<GpuKernelInterval>> parse_nsys_gpu_trace(const std::filesystem::path& csv_file);
Result<std::vector<GpuKernelInterval>> parse_nsys_gpu_trace(std::istream& in, const std::string& source_name);

// The report names, for `nsys stats --report` (nsys 2023.1 and later spell them so).
inline constexpr const char* kNsysNvtxTraceReport = "nvtx_pushpop_trace";
inline constexpr const char* kNsysGpuTraceReport = "cuda_gpu_trace";

}  // namespace llmprof
