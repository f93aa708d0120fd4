// Choosing which kernels ncu should profile inside one NVTX stage, from the nsys tables: the N
// kernels with the most GPU time, or the fewest heaviest kernels that reach a coverage target (a
// fraction of the stage's kernel time) under a cap on distinct kernels; as an ncu --kernel-name value
// and a --launch-count that reaches every one of them. Collective kernels (NCCL and friends) are never
// selected: ncu replays a kernel serially, and a collective waits for peers that are not replaying, so
// profiling one hangs the workload.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmprof/kernel_name.hpp"
#include "llmprof/nsys_stats.hpp"
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

struct SelectedKernel {
  std::string name;                // as nsys printed it
  std::string match_name;          // the form the regex matches: demangled name, or its function name
  std::int64_t total_time_ns = 0;  // GPU time of the kernel inside the stage
  std::int64_t instances = 0;      // launches inside the stage
  double share = 0;                // total_time_ns / the stage's kernel time
  bool operator==(const SelectedKernel&) const = default;
};

// What reaching a higher coverage would take: "3 more kernels for 95%".
struct CoverageStep {
  double target = 0;             // fraction of the stage's kernel time, e.g. 0.95
  std::size_t kernels = 0;       // distinct kernels needed in all (when reachable)
  std::size_t more_kernels = 0;  // kernels beyond the selection (when reachable)
  bool reachable = true;         // false: collectives hold too much of the stage's time
  bool operator==(const CoverageStep&) const = default;
};

// The coverage targets reported beyond what a selection reached.
inline constexpr double coverage_step_targets[] = {0.8, 0.9, 0.95, 0.99};

struct KernelSelection {
  std::string stage;
  std::string domain;
  std::string source;  // "nvtx_kern_sum" or "cuda_gpu_kern_sum (capture gated on the stage)"
  KernelNameBase name_base = KernelNameBase::demangled;
  std::vector<SelectedKernel> kernels;  // most GPU time first
  std::int64_t stage_kernel_time_ns = 0;
  std::int64_t stage_kernel_instances = 0;
  std::size_t stage_kernel_count = 0;       // distinct kernel names in the stage
  double coverage = 0;                      // share of the stage's kernel time the selected kernels hold (0..1)
  std::optional<double> coverage_target;    // the coverage rule's target; nullopt: top-N rule
  std::size_t max_kernels = 0;              // the coverage rule's cap (0 with the top-N rule)
  bool capped = false;                      // the cap stopped the coverage rule short of its target
  std::vector<CoverageStep> more_coverage;  // targets of coverage_step_targets above `coverage`
  // Collective kernels of the stage, left out of the selection (most GPU time first), and their time.
  std::vector<SelectedKernel> collectives_left_out;
  std::int64_t collective_time_ns = 0;
  double collective_share = 0;  // of the stage's kernel time
  // `--kernel-name` value: "regex:^(?:...)$", matching the selected kernels (and only kernels
  // sharing a function name with one of them, listed in also_matched, when name_base is function).
  std::string kernel_regex;
  // Unselected kernels of the stage that kernel_regex matches too (same function name).
  std::vector<std::string> also_matched;
  // A --launch-count that profiles every selected kernel at least once whatever the launch order,
  // when ncu is filtered to the same stage (--nvtx-include): all matching launches except those of
  // the rarest selected kernel, plus one.
  std::int64_t launch_count = 0;
  bool operator==(const KernelSelection&) const = default;
};

// Errors: the stage has no rows (the message lists the stages that exist), nvtx_kern_sum absent
// without capture_gated_on_stage, n == 0, a coverage outside (0, 1], max_kernels == 0, the stage present
// in several domains with no domain set, a stage whose kernels are all collectives.
Result<KernelSelection> select_top_kernels(const NsysStats& stats, const TopKernelRequest& request);

}  // namespace llmprof
