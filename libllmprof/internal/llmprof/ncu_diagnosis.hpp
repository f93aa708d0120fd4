// What an ncu run's console output says about it: kernels profiled, filters that matched nothing,
// ==ERROR== lines. ncu exits 0 when its filters match no kernel, so the output is the only evidence.
//
// Recorded outputs: tests/data/h100-nsight-2025.3/cli/{ncu_nokernels.txt, ncu_nvtx_nomatch.txt, transcripts.md}.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/result.hpp"

namespace llmprof {

struct NcuOutputDiagnosis {
  // "==WARNING== No kernels were profiled.": the kernel/NVTX filters matched nothing.
  bool no_kernels_profiled = false;
  // The "Available Kernels:" list printed after it ("1. name" lines, numbers stripped).
  std::vector<std::string> available_kernels;
  // "==WARNING== Note that specified NVTX include expressions match only push/pop ranges.".
  bool nvtx_filter_note = false;
  std::vector<std::string> errors;         // "==ERROR==" lines, prefix removed
  std::vector<std::string> warnings;       // "==WARNING==" lines, prefix removed
  int profiled_kernels = 0;                // "==PROF== Profiling ..." lines
  std::optional<int> planned_kernels;      // N of the last "(i/N)" seen
  std::vector<std::string> kernel_names;   // the quoted names of the "==PROF== Profiling" lines
  std::optional<std::string> report_path;  // "==PROF== Report: <path>"
  int connected_processes = 0;             // "==PROF== Connected to process"
  // "==ERROR== Nsight Compute failed to connect to the CUDA driver" (2022.3 on a machine without an NVIDIA
  // driver: the application does not even run, then "No kernels were profiled", exit 1). Retrying with
  // other filters cannot help.
  bool no_cuda_driver = false;

  bool has_errors() const { return !errors.empty(); }
};

NcuOutputDiagnosis diagnose_ncu_output(std::string_view output);

// The Error an ncu run with this output amounts to, or nullopt when it profiled kernels and printed no
// ==ERROR==. `filters` describes the kernel/NVTX filters used (for the message), e.g.
// "--nvtx-include decode/ --kernel-name regex:gemm". No kernels: ErrorCode::no_report with the
// available kernels in the hint; a --section that matched nothing: invalid_argument; other errors:
// process_failed; no CUDA driver: ErrorCode::unsupported ("needs an NVIDIA GPU and driver").
std::optional<Error> ncu_output_error(const NcuOutputDiagnosis& diagnosis, std::string_view filters = {});

}  // namespace llmprof
