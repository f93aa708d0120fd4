// Choosing which kernels ncu should profile inside one NVTX stage, from the nsys tables: the N
// kernels with the most GPU time, or the fewest heaviest kernels that reach a coverage target (a
// fraction of the stage's kernel time) under a cap on distinct kernels; as an ncu --kernel-name value
// and a --launch-count that reaches every one of them. Collective kernels (NCCL and friends) are never
// selected: ncu replays a kernel serially, and a collective waits for peers that are not replaying, so
// profiling one hangs the workload.
//
// The selection is a record of the rundir layer (llmprof/kernel_selection_record.hpp): nsys/selection.json and
// report.json's top_kernel_selection write it through one field table (rundir/kernel_selection_json.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/kernel_name.hpp"
#include "llmprof/nsys_stats.hpp"
#include "llmprof/kernel_selection_record.hpp"  // KernelSelection, the record this computes
#include "llmprof/result.hpp"

namespace llmprof {

struct TopKernelRequest {
  std::string stage;                  // NVTX range name, e.g. "decode"
  std::optional<std::string> domain;  // nullopt: whichever domain holds `stage`; "" = default domain
  std::size_t n = 5;                  // top-N rule: this many kernels (unused when coverage is set)
  // Coverage rule, when set (0 < coverage <= 1): the fewest heaviest kernels whose time reaches this
  // fraction of the stage's kernel time, at most max_kernels of them.
  std::optional<double> coverage;
  std::size_t max_kernels = 30;
  KernelNameBase name_base = KernelNameBase::demangled;
  // The nsys capture itself was gated on this stage (nsys --capture-range=nvtx --nvtx-capture=STAGE),
  // so the whole-run cuda_gpu_kern_sum holds exactly the stage's kernels. Only then is that table
  // used when nvtx_kern_sum has no rows for the stage; it is never a silent fallback.
  bool capture_gated_on_stage = false;
  // The capture itself is the stage: the workload's own profiling window (cudaProfilerApi) when it emits no step
  // range (run.stage = "auto" found no kind). Every kernel of cuda_gpu_kern_sum; `stage` only names it.
  bool whole_capture = false;
};

// The coverage targets reported beyond what a selection reached.
inline constexpr double coverage_step_targets[] = {0.8, 0.9, 0.95, 0.99};

// Errors: the stage has no rows (the message lists the stages that exist), nvtx_kern_sum absent
// without capture_gated_on_stage, n == 0, a coverage outside (0, 1], max_kernels == 0, the stage present
// in several domains with no domain set, a stage whose kernels are all collectives.
Result<KernelSelection> select_top_kernels(const NsysStats& stats, const TopKernelRequest& request);

}  // namespace llmprof
