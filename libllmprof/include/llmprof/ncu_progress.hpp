// ncu's per-kernel progress line while it profiles, parsed into kernel n of N and its replay passes
// (Nsight Compute 2025.3: `==PROF== Profiling "NAME" - 3 (4/40): 0%....50%....100% - 17 passes`).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "llmprof/export.hpp"

namespace llmprof {

struct LLMPROF_API NcuKernelProgress {
  std::string kernel_name;
  int launch_id = 0;  // ncu's global id (the "- 3" part); 0 when the line has none
  int index = 0;      // n of n/N; 0 when the line has none (ncu 2025.3.1 under --filter-mode per-launch-config)
  int total = 0;      // N
  int passes = 0;     // 0 when the line has no "- K passes" (still running)
};

// nullopt for any other line (the workload's output, other ==PROF== lines).
LLMPROF_API std::optional<NcuKernelProgress> parse_ncu_progress_line(std::string_view line);

// The pid of `==PROF== Connected to process 4242 (/usr/bin/python3.11)` (ncu 2022.3 and 2025.3.1 print one per
// process they profile, with --target-processes all each child too): the processes a pass may end. nullopt for
// any other line, and for a pid that is not a positive integer.
LLMPROF_API std::optional<int> parse_ncu_connected_process(std::string_view line);

}  // namespace llmprof
